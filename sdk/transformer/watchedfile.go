package transformer

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// watchedFile is what a small file says, read again whenever the file changes: the files of the
// Transform's Secret volume are replaced under a running pod (the kubelet writes a new directory
// and swaps a symlink), and honouring them without a restart is the point of reading them.
// A change is a new file behind the path, or a new modification time or size (a file rewritten
// in place).
type watchedFile[T any] struct {
	path string
	// limit bounds the bytes read: a file past it is an error, not a memory spike.
	limit int64
	// parse turns the bytes into the value; its errors need not name the file.
	parse func([]byte) (T, error)

	mu  sync.Mutex
	fi  os.FileInfo // of the last read; nil before the first
	val T
	err error
}

// get returns what the file says, reading and parsing it only when it changed since the last
// call. A file that cannot be found is reported as os.Stat does (errors.Is fs.ErrNotExist), each
// time, so that it is read as soon as it appears.
func (f *watchedFile[T]) get() (T, error) {
	fi, err := os.Stat(f.path)
	if err != nil {
		var zero T
		return zero, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fi != nil && os.SameFile(fi, f.fi) && fi.ModTime().Equal(f.fi.ModTime()) && fi.Size() == f.fi.Size() {
		return f.val, f.err
	}
	f.fi = fi
	f.val, f.err = f.read()
	return f.val, f.err
}

func (f *watchedFile[T]) read() (T, error) {
	var zero T
	file, err := os.Open(f.path)
	if err != nil {
		return zero, err
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, f.limit+1))
	if err != nil {
		return zero, err // *fs.PathError, which names the file
	}
	if int64(len(b)) > f.limit {
		return zero, fmt.Errorf("%s is larger than %d bytes", f.path, f.limit)
	}
	v, err := f.parse(b)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", f.path, err)
	}
	return v, nil
}
