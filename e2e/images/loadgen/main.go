// Command loadgen is the in-cluster load generator of `make bench-cluster` and the bare parts it
// measures the data path against (package internal/loadgen):
//
//	loadgen serve [-listen :8080] [-files 4096,1048576] [-dir DIR]
//	                                                     the bare echo: PUT /echo echoes the body,
//	                                                     /ws is a WebSocket echo, GET /file/<size>
//	                                                     serves a file of Payload(size) bytes,
//	                                                     PUT /store/<name> stores the body durably
//	                                                     (loadgen.Store), GET /dir/<path> serves
//	                                                     DIR's files
//	loadgen relay [-listen :8080] -backend host:port     a TCP relay in front of a backend
//	loadgen drive -plan '<json>'                          runs a loadgen.Plan, one JSON result a line
//	loadgen cat                                           copies standard input to standard output:
//	                                                     the io row's command, as small as a process is
//	loadgen sums DIR                                      the SHA-256 of every file under DIR, as
//	                                                     sha256sum prints them (loadgen.TreeSums)
//	loadgen s3 seed|md5|check -endpoint URL -bucket B -prefix P [-to-bucket B2 -to-prefix Q]
//	           [-n N -size BYTES] [-workers W]             the store benchmark's jobs against an S3
//	                                                     server, keys in $AWS_ACCESS_KEY_ID and
//	                                                     $AWS_SECRET_ACCESS_KEY (loadgen.S3): seed
//	                                                     N objects, the plain GET → MD5 → PUT
//	                                                     program, or check every result; one JSON
//	                                                     line
//	tar ...                                               (the image's link /tar) as much of tar as
//	                                                     kubectl cp runs in a container
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mlkube/mlkube/internal/loadgen"
	"github.com/mlkube/mlkube/sdk/ioframe"
)

func main() {
	if filepath.Base(os.Args[0]) == "tar" {
		if err := runTar(os.Args[1:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "tar:", err)
			os.Exit(2)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

const usage = "usage: loadgen serve|relay|drive|cat|cat-framed|sums|s3 [flags]"

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fs := flag.NewFlagSet("loadgen "+args[0], flag.ContinueOnError)
	listen := fs.String("listen", ":8080", "address to listen on (serve, relay)")
	files := fs.String("files", "", "comma-separated sizes of the files GET /file/<size> serves (serve)")
	dir := fs.String("dir", "", "a directory whose files GET /dir/<path> serves as they are (serve)")
	backend := fs.String("backend", "", "host:port the relay forwards to (relay)")
	plan := fs.String("plan", "", "the loadgen.Plan to run, as JSON (drive)")
	if args[0] == "s3" {
		return runS3(ctx, args[1:], out)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	switch args[0] {
	case "cat":
		_, err := io.CopyBuffer(out, os.Stdin, make([]byte, 128<<10))
		return err
	case "cat-framed":
		// cat as a persistent io command: object after object, each echoed as it is read.
		return ioframe.Serve(os.Stdin, out, func(_, _ string, in io.Reader, w io.Writer) error {
			_, err := io.Copy(w, in)
			return err
		})
	case "sums":
		if fs.NArg() != 1 {
			return errors.New("sums: one directory, please")
		}
		sums, err := loadgen.TreeSums(fs.Arg(0))
		if err != nil {
			return err
		}
		return loadgen.FormatSums(out, sums)
	case "serve":
		h, err := bareServer(*files, *dir)
		if err != nil {
			return err
		}
		srv := &http.Server{Addr: *listen, Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { <-ctx.Done(); srv.Close() }()
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	case "relay":
		if *backend == "" {
			return errors.New("relay: -backend host:port is required")
		}
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			return err
		}
		go func() { <-ctx.Done(); ln.Close() }()
		loadgen.Relay(ln, *backend)
		return nil
	case "drive":
		var p loadgen.Plan
		if err := json.Unmarshal([]byte(*plan), &p); err != nil {
			return fmt.Errorf("drive: -plan is not a loadgen.Plan: %w", err)
		}
		enc := json.NewEncoder(out)
		return p.Execute(ctx, func(round int, r loadgen.Result) {
			_ = enc.Encode(loadgen.RoundResult{Round: round, Result: r})
		})
	}
	return fmt.Errorf("unknown command %q; %s", args[0], usage)
}

// bareServer is the bare echo, file server and store; the files are written to a directory of
// the temporary directory (an emptyDir in a pod) before it serves, and the store writes to
// another. With served set, it also serves that directory's files (a node's data, for the
// in-pod benchmark's plain HTTP row).
func bareServer(sizes, served string) (http.Handler, error) {
	dir, err := os.MkdirTemp("", "files")
	if err != nil {
		return nil, err
	}
	for s := range strings.SplitSeq(sizes, ",") {
		if s == "" {
			continue
		}
		size, err := strconv.Atoi(s)
		if err != nil || size < 0 || size > loadgen.MaxSize {
			return nil, fmt.Errorf("-files: %q is not a size within 0..%d", s, loadgen.MaxSize)
		}
		if err := os.WriteFile(filepath.Join(dir, s), loadgen.Payload(size), 0o644); err != nil {
			return nil, err
		}
	}
	store, err := os.MkdirTemp("", "store")
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(store)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /echo", loadgen.Echo)
	mux.Handle("PUT /store/{name...}", loadgen.Store(root))
	mux.HandleFunc("GET /ws", loadgen.WSEcho)
	// net/http's file server, as a user's bare GET of a file would be served (sendfile).
	mux.Handle("GET /file/", http.StripPrefix("/file/", http.FileServer(http.Dir(dir))))
	if served != "" {
		mux.Handle("GET /dir/", http.StripPrefix("/dir/", http.FileServer(http.Dir(served))))
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	return mux, nil
}

// runS3 runs one job of the store benchmark (loadgen s3 seed|md5|check) and prints its result as
// one JSON line.
func runS3(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: loadgen s3 seed|md5|check [flags]")
	}
	fs := flag.NewFlagSet("loadgen s3 "+args[0], flag.ContinueOnError)
	endpoint := fs.String("endpoint", "", "the S3 server, http(s)://host[:port]")
	bucket := fs.String("bucket", "", "the bucket of the objects")
	prefix := fs.String("prefix", "", "the prefix of the objects")
	toBucket := fs.String("to-bucket", "", "the bucket of the results (md5, check)")
	toPrefix := fs.String("to-prefix", "", "the prefix of the results (md5, check)")
	n := fs.Int("n", 1000, "how many objects to seed")
	size := fs.Int("size", 1<<20, "the size of each seeded object")
	workers := fs.Int("workers", 4, "requests at a time")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	keys := [2]string{os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")}
	src, err := loadgen.OpenS3(*endpoint, *bucket, keys[0], keys[1])
	if err != nil {
		return err
	}
	var dst *loadgen.S3
	if args[0] != "seed" {
		if dst, err = loadgen.OpenS3(*endpoint, *toBucket, keys[0], keys[1]); err != nil {
			return err
		}
		if err := dst.Ensure(ctx); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(out)
	switch args[0] {
	case "seed":
		if err := src.Seed(ctx, *prefix, *n, *size, *workers); err != nil {
			return err
		}
		return enc.Encode(map[string]int{"seeded": *n})
	case "md5":
		r, err := src.MD5(ctx, *prefix, dst, *toPrefix, *workers)
		if err != nil {
			return err
		}
		return enc.Encode(r)
	case "check":
		checked, err := src.CheckMD5(ctx, *prefix, dst, *toPrefix, *workers)
		if err != nil {
			return err
		}
		return enc.Encode(map[string]int{"checked": checked})
	}
	return fmt.Errorf("unknown s3 job %q: seed, md5 or check", args[0])
}
