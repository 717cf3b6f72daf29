package meshstate

import (
	"strings"
	"testing"
)

func TestCheckKey(t *testing.T) {
	for _, key := range []string{"a", "all.github", "machine-1.server_2", "a/b=c", "A.Z.0.9", "-", "_", "k_kv", "x._kv", "_KV", strings.Repeat("k", 1024)} {
		if problem := CheckKey(key); problem != "" {
			t.Errorf("%q: %s", key, problem)
		}
	}
	for key, want := range map[string]string{
		"":                             "a key may not be empty",
		".a":                           `key ".a" may not start or end with "."`,
		"a.":                           `key "a." may not start or end with "."`,
		"a..b":                         `key "a..b" may not contain an empty token ("..")`,
		"_kv":                          `key "_kv" may not start with _kv (reserved by NATS)`,
		strings.Repeat("k", 1025):      "a key is at most 1024 bytes, got 1025",
		"a b":                          `key "a b" may use only letters, digits and - / _ = .`,
		strings.Repeat("a", 50) + " b": `key "` + strings.Repeat("a", 40) + `"… may use only letters, digits and - / _ = .`,
	} {
		if got := CheckKey(key); got != want {
			t.Errorf("CheckKey(%.20q) = %q, want %q", key, got, want)
		}
	}
	for _, key := range []string{"a*", "*", ">", "a.>", "é", "a\n", "a\tb", "a$b", "a,b", "🚀", "a:b"} {
		if CheckKey(key) == "" {
			t.Errorf("%q passed", key)
		}
	}
}

func TestCheckFilter(t *testing.T) {
	for _, filter := range []string{"all.github", "*", ">", "all.*", "*.github", "*.*", "all.>", "*.>", "a.*.c.>", "x/y=z.*", "a._kv"} {
		if problem := CheckFilter(filter); problem != "" {
			t.Errorf("%q: %s", filter, problem)
		}
	}
	for filter, want := range map[string]string{
		"":      "a filter may not be empty",
		"all*":  `filter "all*": token "all*" may use only letters, digits and - / _ =, or be * or >`,
		">.a":   `filter ">.a": ">" may only be the last token`,
		"a.>.>": `filter "a.>.>": ">" may only be the last token`,
		"a..b":  `filter "a..b" has an empty token`,
		"_kv.>": `filter "_kv.>" may not start with _kv (reserved by NATS)`,
	} {
		if got := CheckFilter(filter); got != want {
			t.Errorf("CheckFilter(%q) = %q, want %q", filter, got, want)
		}
	}
	for _, filter := range []string{"a.b*", "*a", "a>", ">a", "a.**", "a.>>", ".", ".a", "a.", "*.", ".>", "a b", "é", "a.$b"} {
		if CheckFilter(filter) == "" {
			t.Errorf("%q passed", filter)
		}
	}
}
