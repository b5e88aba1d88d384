//go:build !linux

package main

import "errors"

// kernelRoutes exists off Linux only so the module builds and vets there; the daemon runs on
// Linux nodes alone.
type kernelRoutes struct{}

var errNotLinux = errors.New("nodenet manages routes on Linux only")

func (kernelRoutes) Replace(Route) error         { return errNotLinux }
func (kernelRoutes) Delete(Route) error          { return errNotLinux }
func (kernelRoutes) Installed() ([]Route, error) { return nil, errNotLinux }
