// Package objects names the objects the e2e suite puts on each node for its TransformRuns, so it
// knows every byte it should find transformed without reading the inputs back.
package objects

import "fmt"

// Name is the name of object i of a generated dataset.
func Name(i int) string { return fmt.Sprintf("obj-%04d", i) }

// Content is generated object i on node; a poisoned one starts with "poison", which the suite's
// failing transformer refuses.
func Content(i int, node string, poison bool) []byte {
	if poison {
		return fmt.Appendf(nil, "poison %d of node %s", i, node)
	}
	return fmt.Appendf(nil, "object %d of node %s", i, node)
}
