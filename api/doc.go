// Package api holds mlkube's custom resource types: one sub-package per API group and version.
package api
