// Package fuzzbytes turns a fuzzer's input into choices, for fuzz targets that build structured
// inputs (objects, clusters, sequences of events) from the bytes `go test -fuzz` mutates: each
// choice consumes the next byte, so small mutations make small changes to what is built.
package fuzzbytes

// Stream hands out the fuzzer's bytes one at a time, then zeros.
type Stream []byte

// Next returns the next byte, or 0 once the stream is used up.
func (s *Stream) Next() byte {
	if len(*s) == 0 {
		return 0
	}
	b := (*s)[0]
	*s = (*s)[1:]
	return b
}

// Pick returns one of options, chosen by the next byte.
func Pick[T any](s *Stream, options ...T) T { return options[int(s.Next())%len(options)] }
