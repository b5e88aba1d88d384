package agent

import "github.com/mlkube/mlkube/internal/bufpool"

// bufferSize is the unit objects are copied in. 64 KiB halves the system
// calls of a large stream against the SDK's 32 KiB and still costs little per
// object in flight.
const bufferSize = 64 << 10

var buffers = bufpool.New(bufferSize)

func getBuffer() *[]byte  { return buffers.Get() }
func putBuffer(b *[]byte) { buffers.Put(b) }
