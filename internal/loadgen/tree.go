package loadgen

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// TreeSums is the SHA-256 (lower-case hex) of every regular file under dir, by its path relative
// to dir, slash-separated: what a copy of a tree must keep.
func TreeSums(dir string) (map[string]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	sums := map[string]string{}
	err = fs.WalkDir(root.FS(), ".", func(name string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		f, err := root.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		sums[name] = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	return sums, err
}

// FormatSums writes sums as sha256sum prints them, sorted by path: "<hex>  <path>" a line.
func FormatSums(w io.Writer, sums map[string]string) error {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	slices.Sort(names)
	bw := bufio.NewWriter(w)
	for _, n := range names {
		fmt.Fprintf(bw, "%s  %s\n", sums[n], n)
	}
	return bw.Flush()
}

// ParseSums reads what FormatSums wrote.
func ParseSums(r io.Reader) (map[string]string, error) {
	sums := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != sha256.Size*2 {
			return nil, fmt.Errorf("%q is not a line of sums", sc.Text())
		}
		sums[name] = sum
	}
	return sums, sc.Err()
}
