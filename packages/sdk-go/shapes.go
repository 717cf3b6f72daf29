package meshstate

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
)

// Credential shapes (issue 16): only prefixes and structures real credentials carry, so ordinary text,
// hashes, UUIDs, public keys, certificates and data URLs pass. Where a shape is unsure it allows.

var (
	pemPrivateKey = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----`)
	// A bearer header value: the whole string (optionally after "Authorization:") is "Bearer <token68>".
	bearerValue = regexp.MustCompile(`^\s*(?:[Aa]uthorization:\s*)?[Bb][Ee][Aa][Rr][Ee][Rr]\s+([A-Za-z0-9\-._~+/]+=*)\s*$`)
	// Three base64url segments, the first starting as a JSON object does ("eyJ" is `{"`).
	jwtCandidate = regexp.MustCompile(`(?:^|[^A-Za-z0-9_\-.])(eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)`)
	urlPassword  = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^/?#@\s:]*:[^/?#@\s]+@`)
	tokenShapes  = []struct {
		kind    string
		literal string // a substring every match holds: the regexp runs only where it is present
		pattern *regexp.Regexp
	}{
		{"aws-access-key-id", "IA", regexp.MustCompile(`(?:^|[^A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?:$|[^A-Za-z0-9])`)},
		{"github-token", "gh", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36}(?:$|[^A-Za-z0-9_])`)},
		{"github-token", "github_pat_", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])github_pat_[A-Za-z0-9_]{82}(?:$|[^A-Za-z0-9_])`)},
		{"gitlab-token", "glpat-", regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20}(?:$|[^A-Za-z0-9_-])`)},
		{"slack-token", "xox", regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])xox[abprs]-[0-9]+-[A-Za-z0-9-]{8,}`)},
		{"stripe-key", "_live_", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])[sr]k_live_[A-Za-z0-9]{24,}(?:$|[^A-Za-z0-9_])`)},
		{"google-api-key", "AIza", regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?:$|[^A-Za-z0-9_-])`)},
		{"npm-token", "npm_", regexp.MustCompile(`(?:^|[^A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?:$|[^A-Za-z0-9_])`)},
		{"api-key", "sk-", regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])sk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}(?:$|[^A-Za-z0-9_-])`)},
	}
)

// credentialShape returns the kind of credential the string carries, or "".
func credentialShape(text string) string {
	if len(text) < 20 {
		return "" // no shape below is shorter
	}
	if strings.Contains(text, "-----BEGIN") {
		if strings.Contains(text, "-----BEGIN NATS USER JWT-----") || strings.Contains(text, "BEGIN USER NKEY SEED") {
			return "nats-creds"
		}
		if pemPrivateKey.MatchString(text) {
			return "pem-private-key"
		}
	}
	if containsNATSSeed(text) {
		return "nats-seed"
	}
	if strings.Contains(text, "earer") || strings.Contains(text, "EARER") {
		if match := bearerValue.FindStringSubmatch(text); match != nil && plausibleToken(match[1]) {
			return "bearer-token"
		}
	}
	if strings.Contains(text, "eyJ") && containsJWT(text) {
		return "jwt"
	}
	for _, shape := range tokenShapes {
		if strings.Contains(text, shape.literal) && shape.pattern.MatchString(text) {
			return shape.kind
		}
	}
	if strings.Contains(text, "://") && urlPassword.MatchString(text) {
		return "url-password"
	}
	return ""
}

// plausibleToken keeps "Bearer authentication" (prose) apart from a token: at least 16 characters with
// a digit or a symbol of token68.
func plausibleToken(token string) bool {
	return len(token) >= 16 && strings.ContainsAny(token, "0123456789-._~+/=")
}

func containsJWT(text string) bool {
	for _, match := range jwtCandidate.FindAllStringSubmatch(text, -1) {
		header := match[1][:strings.IndexByte(match[1], '.')]
		decoded, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(header, "="))
		if err != nil {
			continue
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(decoded, &fields) != nil {
			continue
		}
		if _, ok := fields["alg"]; ok {
			return true
		}
	}
	return false
}

// A NATS seed: "S" and a type letter, then base32 of 36 bytes (58 characters in all) whose last two
// bytes are the CRC16 of the first 34.
const seedLength = 58

func isBase32(c byte) bool { return (c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7') }
func isAlnum(c byte) bool  { return isUpper(c) || isLower(c) || isDigit(c) }

func containsNATSSeed(text string) bool {
	for start := strings.IndexByte(text, 'S'); start >= 0 && start+seedLength <= len(text); {
		if (start == 0 || !isAlnum(text[start-1])) && strings.IndexByte("UAOCNX", text[start+1]) >= 0 &&
			(start+seedLength == len(text) || !isAlnum(text[start+seedLength])) && validSeed(text[start:start+seedLength]) {
			return true
		}
		next := strings.IndexByte(text[start+1:], 'S')
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return false
}

func validSeed(candidate string) bool {
	for i := 0; i < len(candidate); i++ {
		if !isBase32(candidate[i]) {
			return false
		}
	}
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(candidate)
	if err != nil || len(raw) != 36 {
		return false
	}
	return crc16(raw[:34]) == uint16(raw[34])|uint16(raw[35])<<8
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), the nkeys checksum.
func crc16(data []byte) uint16 {
	var crc uint16
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
