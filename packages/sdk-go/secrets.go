package meshstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// The secret rule (state-protocol's secrets/rule.ts, ported exactly): a value may not carry an object field
// whose name, split into words, ends in a credential word or pair. And (issue 16) a string whose shape
// is a credential's: see credentialShape. The runtime runs the same rule and stays the authority; the
// SDK runs it first so a refusal comes early, typed, and the value never leaves the process.

var credentialWords = map[string]bool{
	"password": true, "passwords": true, "passwd": true, "pwd": true, "passphrase": true,
	"secret": true, "secrets": true, "token": true, "authorization": true,
	"credential": true, "credentials": true, "creds": true, "cookie": true, "cookies": true, "apikey": true, "apikeys": true,
	"jwt": true, "jwts": true, "bearer": true,
}

var keyPairFirstWords = map[string]bool{
	"api": true, "private": true, "access": true, "secret": true, "signing": true, "encryption": true,
}

// credentialPairs: a last word, and the words before it that make a credential of it.
var credentialPairs = map[string]map[string]bool{
	"key": keyPairFirstWords, "keys": keyPairFirstWords,
	"seed": {"nkey": true}, "seeds": {"nkey": true},
}

// encodingWords may follow a credential without making it something else: privateKeyPem, tokenValue.
var encodingWords = map[string]bool{"pem": true, "der": true, "base": true, "hex": true, "jwk": true, "raw": true, "bytes": true, "value": true}

func isSeparator(r rune) bool { return r == '_' || r == '.' || r == '-' || unicode.IsSpace(r) }
func isUpper(c byte) bool     { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool     { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool     { return c >= '0' && c <= '9' }

// fieldNameWords splits a field name into lower-case words: camelCase (acronym runs kept: APIKey is
// api key), snake_case, kebab-case, dots, spaces; trailing numeric words are dropped.
func fieldNameWords(name string) []string {
	var words []string
	for _, part := range strings.FieldsFunc(name, isSeparator) {
		for i := 0; i < len(part); {
			c := part[i]
			end := i + 1
			switch {
			case isUpper(c):
				end = runEnd(part, i, isUpper)
				if end < len(part) && isLower(part[end]) {
					// An upper run before a lower-case letter: the run minus its last letter is an acronym,
					// the last letter starts a capitalised word.
					if end-1 > i {
						words = append(words, strings.ToLower(part[i:end-1]))
					}
					i = end - 1
					end = runEnd(part, end, isLower)
				}
			case isLower(c):
				end = runEnd(part, i, isLower)
			case isDigit(c):
				end = runEnd(part, i, isDigit)
			default:
				i = end // not part of any word
				continue
			}
			words = append(words, strings.ToLower(part[i:end]))
			i = end
		}
	}
	for len(words) > 0 && isDigit(words[len(words)-1][0]) {
		words = words[:len(words)-1]
	}
	return words
}

// runEnd is the end of the run of bytes of one class that starts at from.
func runEnd(text string, from int, class func(byte) bool) int {
	end := from
	for end < len(text) && class(text[end]) {
		end++
	}
	return end
}

// isCredentialFieldName says whether a field name ends in a credential word or pair, possibly followed by
// one encoding word (privateKeyPem, tokenValue).
func isCredentialFieldName(name string) bool {
	words := fieldNameWords(name)
	if endsInCredential(words, len(words)) {
		return true
	}
	return len(words) > 1 && encodingWords[words[len(words)-1]] && endsInCredential(words, len(words)-1)
}

func endsInCredential(words []string, end int) bool {
	if end < 1 {
		return false
	}
	last := words[end-1]
	if credentialWords[last] {
		return true
	}
	return end >= 2 && credentialPairs[last][words[end-2]]
}

func plainStep(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		first := isUpper(c) || isLower(c) || c == '_' || c == '$'
		if i == 0 && !first {
			return false
		}
		if !first && !isDigit(c) && c != '-' {
			return false
		}
	}
	return true
}

func jsonString(text string) string {
	var buffer bytes.Buffer
	encoder := json.NewEncoder(&buffer)
	encoder.SetEscapeHTML(false)
	_ = encoder.Encode(text)
	return strings.TrimSuffix(buffer.String(), "\n")
}

func pathStep(parent, name string) string {
	if plainStep(name) {
		if parent == "" {
			return name
		}
		return parent + "." + name
	}
	return parent + "[" + jsonString(name) + "]"
}

// SecretFinding is where a value carries a credential and what was recognised: Kind is "field-name" for
// the name rule, or a shape (pem-private-key, nats-seed, nats-creds, jwt, bearer-token,
// aws-access-key-id, github-token, gitlab-token, slack-token, stripe-key, google-api-key, npm-token,
// api-key, url-password). Path is "" for the bare value, else as state-protocol writes it
// (servers[1].env.GITHUB_TOKEN, ["signing keys"]). It never holds the value.
type SecretFinding struct {
	Path string
	Kind string
}

// FindSecret walks an encoded JSON value once, depth first in field order, and returns the first field
// named like a credential or string shaped like one.
func FindSecret(value json.RawMessage) (SecretFinding, bool, error) {
	decoder := json.NewDecoder(bytes.NewReader(value))
	decoder.UseNumber()
	finding, found, err := walkSecrets(decoder, "")
	if err != nil {
		return SecretFinding{}, false, err
	}
	return finding, found, nil
}

func walkSecrets(decoder *json.Decoder, path string) (SecretFinding, bool, error) {
	token, err := decoder.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return SecretFinding{}, false, err
	}
	switch typed := token.(type) {
	case json.Delim:
		switch typed {
		case '{':
			for decoder.More() {
				nameToken, err := decoder.Token()
				if err != nil {
					return SecretFinding{}, false, err
				}
				name, _ := nameToken.(string)
				child := pathStep(path, name)
				// A credential in a field's name is reported at the object holding it: the path never repeats it.
				if kind := credentialShape(name); kind != "" {
					return SecretFinding{Path: path, Kind: kind}, true, nil
				}
				if isCredentialFieldName(name) {
					return SecretFinding{Path: child, Kind: "field-name"}, true, nil
				}
				if finding, found, err := walkSecrets(decoder, child); found || err != nil {
					return finding, found, err
				}
			}
		case '[':
			for index := 0; decoder.More(); index++ {
				if finding, found, err := walkSecrets(decoder, path+"["+strconv.Itoa(index)+"]"); found || err != nil {
					return finding, found, err
				}
			}
		}
		if _, err := decoder.Token(); err != nil { // the closing delimiter
			return SecretFinding{}, false, err
		}
	case string:
		if kind := credentialShape(typed); kind != "" {
			return SecretFinding{Path: path, Kind: kind}, true, nil
		}
	}
	return SecretFinding{}, false, nil
}

// checkValue runs the runtime's value rules before a write leaves the process: the mesh's size cap and
// the secret rule. The bucket's own max value size may be lower; the runtime checks that one.
func checkValue(bucket, key string, encoded json.RawMessage) error {
	if len(encoded) > MaxValueBytes {
		return newStateError(ReasonTooLarge, fmt.Sprintf("the value for %s is %d bytes encoded; a value is at most %d: store less, or split it over keys", key, len(encoded), MaxValueBytes), bucket, key)
	}
	finding, found, err := FindSecret(encoded)
	if err != nil {
		return &ClientError{Reason: ClientInvalidValue, Message: fmt.Sprintf("value for key %s in bucket %s is not JSON, nothing was written: %v", key, bucket, err), Bucket: bucket, Key: key, Cause: err}
	}
	if found {
		return secretRefusal(bucket, key, finding)
	}
	return nil
}

func secretRefusal(bucket, key string, finding SecretFinding) *StateError {
	what := "a field named like a credential"
	if finding.Kind != "field-name" {
		what = "a string shaped like a credential (" + finding.Kind + ")"
	}
	where := finding.Path
	if where == "" {
		where = "the value itself"
	}
	refusal := newStateError(ReasonSecretField, fmt.Sprintf("the value for %s has %s at %s: credentials are never stored on the bus; keep a reference to where the secret lives instead", key, what, where), bucket, key)
	refusal.Path, refusal.Kind = finding.Path, finding.Kind
	refusal.Data["path"], refusal.Data["kind"] = finding.Path, finding.Kind
	return refusal
}
