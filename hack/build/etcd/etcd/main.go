// Command etcd is etcd's own server entry point, built from go.etcd.io/etcd/server/v3 at the
// version this module pins: the proxy serves that module, and its etcdmain is what etcd's
// main package runs.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
