package strictjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		in          string
		exact       []string
		path, key   string
		off, first  int64
		firstKeyIs  string
		notDup, bad bool
	}{
		// The report: the second max_err would be the one read.
		{in: `{"results": [{"kernel": "k", "max_err": 0.9, "max_err": 0.0003}]}`, path: "results[0].max_err", key: "max_err", off: 45, first: 29},
		{in: `{"a": 1, "b": {"c": [1, {"d": 2, "d": 3}]}}`, path: "b.c[1].d", key: "d", off: 33, first: 25},
		{in: `{"schema": "x", "schema": "y"}`, path: "schema", key: "schema", off: 16, first: 1},
		{in: "{\n  \"x\": 1,\n  \"x\": 2\n}", path: "x", key: "x", off: 14, first: 4},
		// Escapes spell the same key.
		{in: `{"max_err": 1, "max\u005ferr": 2}`, path: "max_err", key: "max_err", off: 15, first: 1},
		// Case: one struct field.
		{in: `{"max_err": 1, "Max_Err": 2}`, path: "Max_Err", key: "Max_Err", off: 15, first: 1, firstKeyIs: "max_err"},
		{in: `{"k": 1, "\u212a": 2}`, path: "\u212a", key: "\u212a", off: 9, first: 1, firstKeyIs: "k"}, // the Kelvin sign folds to k
		// Inside a map, case matters, but an exact duplicate is still one.
		{in: `{"extra": {"a": 1, "A": 2}}`, exact: []string{"extra"}, notDup: true},
		{in: `{"extra": {"x": {"a": 1, "A": 2}}}`, exact: []string{"extra"}, notDup: true},
		{in: `{"extra": {"a": 1, "a": 2}}`, exact: []string{"extra"}, path: "extra.a", key: "a", off: 19, first: 11},
		{in: `{"a b": 1, "a b": 2}`, path: `["a b"]`, key: "a b", off: 11, first: 1},
		// Past 16 keys the set is a map: the same rules.
		{in: `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":0,"kb":0,"kc":0,"kd":0,"ke":0,"kf":0,"kg":0,"KB":1}`,
			path: "KB", key: "KB", off: 120, first: 78, firstKeyIs: "kb"},
		// Bytes that are not UTF-8 decode to U+FFFD: two such keys are one.
		{in: "{\"\xff\": 1, \"\xfe\": 2}", path: "[\"\ufffd\"]", key: "\ufffd", off: 9, first: 1},
		{in: `{"": 1, "": 2}`, path: `[""]`, key: "", off: 8, first: 1},
		// Keys in different objects, or array elements, are not duplicates.
		{in: `[{"a": 1}, {"a": 2}, {"b": {"a": 1}, "a": 3}]`, notDup: true},
		{in: `{"a": [], "b": {}, "c": [[], {}], "d": null}`, notDup: true},
		{in: `"just a string"`, notDup: true},
		// Not JSON: an error, never nil.
		{in: `{"a": 1,`, bad: true},
		{in: `{"a" 1}`, bad: true},
		{in: `{1: 2}`, bad: true},
		{in: strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), bad: true},
	}
	for _, tc := range cases {
		err := Check([]byte(tc.in), Options{Exact: tc.exact})
		var d *DuplicateKeyError
		switch {
		case tc.notDup:
			if err != nil {
				t.Errorf("%s: %v", tc.in, err)
			}
		case tc.bad:
			if err == nil || errors.As(err, &d) {
				t.Errorf("%s: %v, want a syntax error", tc.in, err)
			}
		default:
			if !errors.As(err, &d) || !IsDuplicate(err) {
				t.Errorf("%s: %v, want a duplicate", tc.in, err)
				continue
			}
			first := tc.firstKeyIs
			if first == "" {
				first = tc.key
			}
			if d.Path != tc.path || d.Key != tc.key || d.Offset != tc.off || d.FirstOffset != tc.first || d.First != first {
				t.Errorf("%s: %+v", tc.in, d)
			}
			if tc.in[d.Offset] != '"' || !strings.Contains(err.Error(), "byte offset") {
				t.Errorf("%s: %v", tc.in, err)
			}
		}
	}
	// A value cut from a larger input.
	err := CheckAt([]byte(`{"a": 1, "a": 2}`), "results[7]", 1000, Options{})
	var d *DuplicateKeyError
	if !errors.As(err, &d) || d.Path != "results[7].a" || d.Offset != 1009 {
		t.Errorf("CheckAt: %v", err)
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a": 1, "a": 2}`, `{"results": [{"max_err": 0.9, "Max_Err": 1}]}`, `{"extra": {"a": 1, "A": {"b": [1, {"c": 2}]}}}`, `[]`, `{"\u212a": 1, "k": 2}`, `{"a":`, `{"a\u0000": 1, "a\u0000": [1e5, true, null, "x\"y"]}`, "{\"\xff\": 1, \"\xfe\": 2}", ` [ 1 , { } ] `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		err := Check(in, Options{Exact: []string{"extra"}})
		var d *DuplicateKeyError
		var se *SyntaxError
		if errors.As(err, &se) && json.Valid(in) && !strings.Contains(se.Error(), "nested deeper") {
			t.Fatalf("valid JSON refused: %v", err)
		}
		if errors.As(err, &d) {
			if d.Offset < 0 || d.Offset >= int64(len(in)) || in[d.Offset] != '"' || d.FirstOffset >= d.Offset || in[d.FirstOffset] != '"' {
				t.Fatalf("%+v", d)
			}
		}
	})
}

// Unmarshal refuses what Check refuses and decodes the rest.
func TestUnmarshal(t *testing.T) {
	var v struct {
		MaxErr float64 `json:"max_err"`
	}
	if err := Unmarshal([]byte(`{"max_err": 0.9, "Max_Err": 0.0003}`), &v, Options{}); !IsDuplicate(err) {
		t.Errorf("a key given twice: %v", err)
	}
	if err := Unmarshal([]byte(`{"max_err": 0.5}`), &v, Options{}); err != nil || v.MaxErr != 0.5 {
		t.Errorf("decoded %v, %v", v.MaxErr, err)
	}
}

func TestUnmarshalKnown(t *testing.T) {
	type v struct {
		A int `json:"a"`
	}
	for _, tc := range []struct{ name, in, want string }{
		{"known keys", `{"a": 1}` + "\n", ""},
		{"a key twice", `{"a": 1, "a": 2}`, "duplicate key"},
		{"an unknown key", `{"a": 1, "b": 2}`, "unknown field"},
		{"more after the value", `{"a": 1} {"a": 2}`, "more than one JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got v
			err := UnmarshalKnown([]byte(tc.in), &got, Options{})
			switch {
			case tc.want == "" && (err != nil || got.A != 1):
				t.Errorf("got %+v, %v", got, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}
