package pysig

import "testing"

func TestRead(t *testing.T) {
	for name, tc := range map[string]struct {
		source string
		want   Params
		ok     bool
	}{
		"bytes only":               {"def transform(data):\n    return data\n", Params{}, true},
		"name":                     {"def transform(data, path):\n    pass\n", Params{Path: true}, true},
		"AIStore's":                {"def transform(data, path, etl_args):\n    pass\n", Params{Path: true, Args: true}, true},
		"rest":                     {"def transform(data, *_args):\n    pass\n", Params{Path: true, Args: true}, true},
		"keyword-only args":        {"def transform(data, *, etl_args):\n    pass\n", Params{Args: true}, true},
		"keyword-only other":       {"def transform(data, *, path, seed=0):\n    pass\n", Params{Path: true}, true},
		"kwargs take nothing":      {"def transform(data, **kw):\n    pass\n", Params{}, true},
		"positional-only":          {"def transform(data, /, path):\n    pass\n", Params{Path: true}, true},
		"annotations and defaults": {"def transform(\n    data: bytes,  # the object, f(a, b)\n    path: dict[str, int] = {\"a,b\": 1},\n    etl_args: str = ')',\n) -> bytes:\n    pass\n", Params{Path: true, Args: true}, true},
		"async":                    {"async def transform(data, path): pass\n", Params{Path: true}, true},
		"the last def wins":        {"def transform(data, path, etl_args): pass\ndef transform(data): pass\n", Params{}, true},
		"another function":         {"def digest(data, path, etl_args): pass\ndef transform(data): pass\n", Params{}, true},
		"a method is not it":       {"class C:\n    def transform(self, data, path, etl_args): pass\ndef transform(data): pass\n", Params{}, true},
		"decorated":                {"@wrap\ndef transform(data): pass\n", Params{}, false},
		"bound again":              {"def transform(data): pass\ntransform = make(transform)\n", Params{}, false},
		"imported":                 {"from lib import transform\n", Params{}, false},
		"a lambda":                 {"transform = lambda data: data\n", Params{}, false},
		"missing":                  {"def other(data): pass\n", Params{}, false},
		"unclosed":                 {"def transform(data, path", Params{}, false},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := Read(tc.source, "transform")
			if got != tc.want || ok != tc.ok {
				t.Errorf("Read = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
