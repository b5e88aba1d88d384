// Command testserver is the e2e suite's workload. It answers GET / with the pod and node it runs on
// (from the downward-API variables POD_NAME and NODE_NAME), and lets a test probe the cluster from
// inside the pod through the API server's pod proxy: /fetch?url=U returns what U answered (to a
// GET, or to a POST of the request's body),
// /lookup?name=N what cluster DNS says about N. It is also a Python package index serving one
// wheel, mlkubehello, under /simple/ (see packageIndex). /canary/… counts the requests it gets,
// /canary-count says how many. With DATA_DIR set it also serves that directory under /files (see
// files). With HOSTILE set it is a malicious transformer instead (see hostile).
package main

import (
	"encoding/json"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	addr := ":8080"
	if p := os.Getenv("PORT"); p != "" {
		addr = ":" + p
	}
	if mode := os.Getenv("HOSTILE"); mode != "" {
		h, err := newHostile(mode)
		if err != nil {
			log.Fatal(err)
		}
		srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
		log.Fatal(srv.ListenAndServe())
	}
	mux := newMux()
	if dir := os.Getenv("DATA_DIR"); dir != "" {
		// The node's data root is made by the kubelet; the agent, unprivileged, must read it.
		if err := os.Chmod(dir, 0o755); err != nil {
			log.Fatal(err)
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			log.Fatal(err)
		}
		files{root}.register(mux)
	}
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// Identity is what GET / answers.
type Identity struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

func newMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, Identity{Pod: os.Getenv("POD_NAME"), Node: os.Getenv("NODE_NAME")})
	})
	mux.HandleFunc("GET /fetch", fetch)
	mux.HandleFunc("POST /fetch", fetch)
	mux.HandleFunc("GET /lookup", lookup)
	(&canary{}).register(mux)
	packageIndex{wheels: []wheel{helloWheel()}}.register(mux)
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
