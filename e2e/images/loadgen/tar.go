package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// runTar is as much of tar as kubectl cp runs in a container: `tar [--no-same-permissions]
// [--no-same-owner] -xmf - [-C DIR]` unpacks standard input into DIR, and `tar cf - PATH...`
// packs the trees at PATH to standard output under their paths without the leading "/", as GNU
// tar names them. Owners, permissions beyond the executable bit and times are not kept.
func runTar(args []string, in io.Reader, out io.Writer) error {
	var words []string
	for _, a := range args {
		if a != "--no-same-permissions" && a != "--no-same-owner" {
			words = append(words, a)
		}
	}
	if len(words) < 2 || words[1] != "-" {
		return fmt.Errorf("tar %s: only -xmf - [-C DIR] and cf - PATH... are supported", strings.Join(args, " "))
	}
	switch strings.TrimPrefix(words[0], "-") {
	case "xmf", "xf":
		dir := "."
		if len(words) == 4 && words[2] == "-C" {
			dir = words[3]
		} else if len(words) != 2 {
			return fmt.Errorf("tar %s: extract takes only -C DIR", strings.Join(args, " "))
		}
		return untar(in, dir)
	case "cf":
		return packTar(out, words[2:])
	}
	return fmt.Errorf("tar %s: only -xmf - [-C DIR] and cf - PATH... are supported", strings.Join(args, " "))
}

// untar unpacks the regular files and directories of r under dir; a name that leaves dir fails
// (os.Root).
func untar(r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = root.MkdirAll(name, 0o755)
		case tar.TypeReg:
			err = extractFile(root, name, fs.FileMode(h.Mode)&0o111|0o644, tr)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
}

func extractFile(root *os.Root, name string, mode fs.FileMode, r io.Reader) error {
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	return errors.Join(err, f.Close())
}

// packTar writes the trees at paths to w, directories before what they hold.
func packTar(w io.Writer, paths []string) error {
	tw := tar.NewWriter(w)
	for _, p := range paths {
		err := filepath.WalkDir(p, func(name string, e fs.DirEntry, err error) error {
			if err != nil || (!e.IsDir() && !e.Type().IsRegular()) {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			h, err := tar.FileInfoHeader(fi, "")
			if err != nil {
				return err
			}
			h.Name = strings.TrimLeft(filepath.ToSlash(name), "/")
			if e.IsDir() {
				h.Name += "/"
			}
			if err := tw.WriteHeader(h); err != nil || e.IsDir() {
				return err
			}
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(tw, f)
			return err
		})
		if err != nil {
			return err
		}
	}
	return tw.Close()
}
