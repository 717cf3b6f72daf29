package meshstate

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxKeyBytes is the longest key the wire accepts, in bytes (every valid key is ASCII).
const MaxKeyBytes = 1024

// MaxValueBytes is the mesh's cap on one value, encoded as JSON: 256 KiB.
const MaxValueBytes = 262144

func describe(text string) string {
	if len(text) > 40 {
		return strconv.Quote(text[:40]) + "…"
	}
	return strconv.Quote(text)
}

func keyCharacter(c byte, dotAllowed bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c == '-' || c == '/' || c == '_' || c == '=':
		return true
	case c == '.':
		return dotAllowed
	}
	return false
}

// CheckKey says why key is not a valid key, or "" when it is: NATS's rule ([-/_=.a-zA-Z0-9]+, no
// leading or trailing ".", no empty token), at most 1,024 bytes, never starting with _kv.
func CheckKey(key string) string {
	if key == "" {
		return "a key may not be empty"
	}
	if len(key) > MaxKeyBytes {
		return fmt.Sprintf("a key is at most %d bytes, got %d", MaxKeyBytes, len(key))
	}
	for i := 0; i < len(key); i++ {
		if !keyCharacter(key[i], true) {
			return fmt.Sprintf("key %s may use only letters, digits and - / _ = .", describe(key))
		}
	}
	if strings.HasPrefix(key, ".") || strings.HasSuffix(key, ".") {
		return fmt.Sprintf(`key %s may not start or end with "."`, describe(key))
	}
	if strings.Contains(key, "..") {
		return fmt.Sprintf(`key %s may not contain an empty token ("..")`, describe(key))
	}
	if strings.HasPrefix(key, "_kv") {
		return fmt.Sprintf("key %s may not start with _kv (reserved by NATS)", describe(key))
	}
	return ""
}

// CheckFilter says why filter is not a valid watch or keys filter, or "" when it is: key tokens, or the
// NATS wildcards * and > as whole tokens (> only last).
func CheckFilter(filter string) string {
	if filter == "" {
		return "a filter may not be empty"
	}
	if len(filter) > MaxKeyBytes {
		return fmt.Sprintf("a filter is at most %d bytes, got %d", MaxKeyBytes, len(filter))
	}
	if strings.HasPrefix(filter, "_kv") {
		return fmt.Sprintf("filter %s may not start with _kv (reserved by NATS)", describe(filter))
	}
	tokens := strings.Split(filter, ".")
	for index, token := range tokens {
		switch token {
		case "*":
			continue
		case ">":
			if index != len(tokens)-1 {
				return fmt.Sprintf(`filter %s: ">" may only be the last token`, describe(filter))
			}
			continue
		case "":
			return fmt.Sprintf("filter %s has an empty token", describe(filter))
		}
		for i := 0; i < len(token); i++ {
			if !keyCharacter(token[i], false) {
				return fmt.Sprintf("filter %s: token %s may use only letters, digits and - / _ =, or be * or >", describe(filter), describe(token))
			}
		}
	}
	return ""
}
