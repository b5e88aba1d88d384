package main

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// routeTable is where routes go: the host's main table (kernelRoutes), or a fake in tests.
type routeTable interface {
	Replace(Route) error
	Delete(Route) error
}

// reconciler makes the node's CNI config and routes match the nodes the API server has. It is
// used from one goroutine only.
type reconciler struct {
	self     string
	conflist string
	routes   routeTable
	// installed holds the routes this process installed or adopted from an earlier run, by
	// destination: the only ones it ever deletes.
	installed map[netip.Prefix]Route
	// logged holds the problems reported by the last pass, so a node that stays broken is
	// reported once rather than at every node update.
	logged map[string]bool
}

func newReconciler(self, conflist string, routes routeTable, adopted []Route) *reconciler {
	r := &reconciler{self: self, conflist: conflist, routes: routes, installed: map[netip.Prefix]Route{}, logged: map[string]bool{}}
	for _, rt := range adopted {
		r.installed[rt.Dst] = rt
	}
	return r
}

// reconcile brings the conflist and routes in line with nodes, the full node list. With force
// every desired route is replaced, not only new or changed ones, which puts back a route someone
// else deleted. It returns false if any step failed and should be retried; a failure on one route
// does not stop the others.
func (r *reconciler) reconcile(nodes []*corev1.Node, force bool) bool {
	ok := r.writeConflist(nodes)
	desired, errs := desiredRoutes(r.self, nodes)
	problems := map[string]bool{}
	for _, err := range errs {
		problems[err.Error()] = true
		if !r.logged[err.Error()] {
			klog.Warning(err)
		}
	}
	r.logged = problems

	replace, remove := diffRoutes(desired, r.installed)
	if force {
		replace = desired
	}
	for _, rt := range remove {
		if err := r.routes.Delete(rt); err != nil {
			klog.Errorf("deleting route %v: %v", rt, err)
			ok = false
			continue
		}
		klog.Infof("deleted route %v", rt)
		delete(r.installed, rt.Dst)
	}
	for _, rt := range replace {
		if err := r.routes.Replace(rt); err != nil {
			klog.Errorf("installing route %v: %v", rt, err)
			ok = false
			continue
		}
		if old, had := r.installed[rt.Dst]; !had || old.Via != rt.Via {
			klog.Infof("installed route %v", rt)
		}
		r.installed[rt.Dst] = rt
	}
	return ok
}

// writeConflist writes this node's CNI config once the node has a pod CIDR. Until then there is
// nothing to write, and that is no failure: the node update that brings the CIDR calls again.
func (r *reconciler) writeConflist(nodes []*corev1.Node) bool {
	var self *corev1.Node
	for _, n := range nodes {
		if n != nil && n.Name == r.self {
			self = n
		}
	}
	if self == nil {
		klog.V(2).Infof("node %s not seen yet", r.self)
		return true
	}
	cidrs, errs := podCIDRs(self)
	for _, err := range errs {
		klog.Warning(err)
	}
	if len(cidrs) == 0 {
		klog.V(2).Infof("node %s has no pod CIDR yet", r.self)
		return true
	}
	data, err := renderConflist(cidrs)
	if err != nil {
		klog.Errorf("rendering CNI config: %v", err)
		return false
	}
	changed, err := writeIfChanged(r.conflist, data)
	if err != nil {
		klog.Errorf("writing %s: %v", r.conflist, err)
		return false
	}
	if changed {
		klog.Infof("wrote %s for pod CIDRs %v", r.conflist, cidrs)
	}
	return true
}
