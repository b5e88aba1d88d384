package python

import (
	"errors"
	"testing"

	"github.com/mlkube/mlkube/runtimes/python/pysig"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// signatures are the functions of TestSignatures, each answering what it was given.
const signatures = `
def bytes_only(data):
    return b"data=" + data

def with_path(data, path):
    return f"data={data.decode()} path={path}".encode()

def aistore(data, path, etl_args):
    return f"data={data.decode()} path={path} args={etl_args}".encode()

def rest(data, *rest):
    return f"data={data.decode()} rest={rest}".encode()

def keyword_args(data, *, etl_args, flag=False):
    return f"data={data.decode()} args={etl_args} flag={flag}".encode()

def defaults(data, path="", etl_args="", extra=1):
    return f"data={data.decode()} path={path} args={etl_args} extra={extra}".encode()

class Server:
    def transform(self, data, path, etl_args):
        return f"data={data.decode()} path={path} args={etl_args}".encode()

bound = Server().transform
`

// TestSignatures: the runtime passes the object's name and args as each function's signature
// asks, over every mechanism and in chunks too, and pysig (what kubectl etl reads before sending
// --args) says the same of each.
func TestSignatures(t *testing.T) {
	for _, tc := range []struct {
		function, want string
		params         pysig.Params
		readable       bool
	}{
		{"bytes_only", "data=x", pysig.Params{}, true},
		{"with_path", "data=x path=dir/o.txt", pysig.Params{Path: true}, true},
		{"aistore", "data=x path=dir/o.txt args=seed=1", pysig.Params{Path: true, Args: true}, true},
		{"rest", "data=x rest=('dir/o.txt', 'seed=1')", pysig.Params{Path: true, Args: true}, true},
		{"keyword_args", "data=x args=seed=1 flag=False", pysig.Params{Args: true}, true},
		{"defaults", "data=x path=dir/o.txt args=seed=1 extra=1", pysig.Params{Path: true, Args: true}, true},
		{"bound", "data=x path=dir/o.txt args=seed=1", pysig.Params{}, false},
	} {
		t.Run(tc.function, func(t *testing.T) {
			p, ok := pysig.Read(signatures, tc.function)
			if p != tc.params || ok != tc.readable {
				t.Errorf("pysig.Read = %+v, %v; want %+v, %v", p, ok, tc.params, tc.readable)
			}
			s := serve(t, Config{Source: signatures, Function: tc.function}, 1)
			for _, m := range []transformertest.Mechanism{transformertest.HPush, transformertest.WS} {
				got, err := s.Transform(t.Context(), m, "dir/o.txt", "seed=1", []byte("x"))
				if err != nil || string(got) != tc.want {
					t.Errorf("%s: got %q, %v; want %q", m, got, err, tc.want)
				}
			}
		})
	}
	t.Run("chunks", func(t *testing.T) {
		s := serve(t, Config{Source: "def transform(b, path, etl_args):\n    return b'[' + b + b' ' + path.encode() + b' ' + etl_args.encode() + b']'\n", ChunkSize: 2}, 1)
		got, err := s.Transform(t.Context(), transformertest.HPush, "o", "a", []byte("abcd"))
		if err != nil || string(got) != "[ab o a][cd o a]" {
			t.Errorf("got %q, %v", got, err)
		}
	})
}

// TestSignatureLoadErrors: a signature the runtime cannot fill fails at start, naming the
// parameter and listing the accepted signatures.
func TestSignatureLoadErrors(t *testing.T) {
	const accepted = "; the accepted signatures: f(data), f(data, path), f(data, path, etl_args), f(data, *rest), and keyword-only parameters named path and etl_args"
	for source, want := range map[string]string{
		"def transform():\n    return b''\n":                             "MLKUBE_CODE_SOURCE: transform() takes no parameter for the object's bytes" + accepted,
		"def transform(data, path, etl_args, extra):\n    return data\n": "MLKUBE_CODE_SOURCE: transform()'s parameter 'extra' comes after data, path and etl_args and has no default, so the runtime cannot fill it" + accepted,
		"def transform(data, *, seed):\n    return data\n":               "MLKUBE_CODE_SOURCE: transform()'s keyword-only parameter 'seed' is neither path nor etl_args, so the runtime cannot fill it" + accepted,
	} {
		_, err := Start(t.Context(), Config{Source: source, Function: "transform"}, Options{Python: python311(t)})
		le, ok := errors.AsType[*LoadError](err)
		if !ok || le.Message != want {
			t.Errorf("%q: err = %v\nwant: %s", source, err, want)
		}
	}
}
