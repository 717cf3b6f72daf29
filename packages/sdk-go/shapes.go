package meshstate

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
)

// Credential shapes (issue 16), as state-protocol's secrets/credential-shapes.ts has them: only prefixes, armour
// lines and structures real credentials carry, checked for length, alphabet and, where there is one, a
// checksum. One scan, left to right: at each hint only the shapes that begin with it are tried, anchored
// there, and the first that holds names the string. Where in doubt, a string passes
// (docs/decisions/0007-the-secret-rule.md).

// shortestShape: the shortest string a shape can hold (a://b:c@d).
const shortestShape = 9

var (
	natsCredsArmour = regexp.MustCompile(`^-----BEGIN (?:NATS USER JWT|USER NKEY SEED)-----`)
	pemPrivateKey   = regexp.MustCompile(`^-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	placeholder     = regexp.MustCompile(`^(?:\*+|[xX]+|\$\{[^}]*\}|\{\{[^}]*\}\}|<[^>]*>|\$[A-Za-z_][A-Za-z0-9_]*|%s)$`)
)

func inSet(c byte, set string) bool {
	if (isLetter(c) || isDigit(c)) && strings.IndexByte(set, 'a') >= 0 {
		return true
	}
	return strings.IndexByte(set, c) >= 0
}

// Character classes by a representative: "a" stands for [A-Za-z0-9].
const (
	classAlnum      = "a"
	classWord       = "a_"
	classURLSafe    = "a_-"
	classToken68    = "a-._~+/"
	classSchemeRest = "a+.-"
)

func runOf(text string, from int, set string) int {
	end := from
	for end < len(text) && inSet(text[end], set) {
		end++
	}
	return end - from
}

func before(text string, at int, set string) bool { return at > 0 && inSet(text[at-1], set) }
func after(text string, at int, set string) bool  { return at < len(text) && inSet(text[at], set) }

func isLetter(c byte) bool { return isUpper(c) || isLower(c) }

// credentialShape returns the kind of the first credential shape the string carries, or "".
func credentialShape(text string) string {
	if len(text) < shortestShape {
		return ""
	}
	for i := 0; i < len(text); i++ {
		rest := text[i:]
		switch text[i] {
		case '-':
			if strings.HasPrefix(rest, "-----BEGIN ") {
				if natsCredsArmour.MatchString(rest) {
					return "nats-creds"
				}
				if pemPrivateKey.MatchString(rest) {
					return "pem-private-key"
				}
			}
		case 'B', 'b':
			if len(rest) > 7 && (rest[1:6] == "earer" || rest[1:6] == "EARER") && isSpace(rest[6]) && !(i > 0 && isLetter(text[i-1])) {
				j := 6
				for j < len(rest) && isSpace(rest[j]) {
					j++
				}
				token := rest[j : j+runOf(rest, j, classToken68)]
				if len(token) >= 16 && strings.ContainsAny(token, "0123456789") && strings.IndexFunc(token, func(r rune) bool { return r < 128 && isLetter(byte(r)) }) >= 0 {
					return "bearer-token"
				}
			}
		case 'e':
			if strings.HasPrefix(rest, "eyJ") && !before(text, i, classURLSafe) {
				header := runOf(rest, 0, classURLSafe)
				if header >= 13 && header < len(rest) && rest[header] == '.' {
					payload := runOf(rest, header+1, classURLSafe)
					if payload > 0 && header+1+payload < len(rest) && rest[header+1+payload] == '.' && hasJWTHeader(rest[:header]) {
						return "jwt"
					}
				}
			}
		case 'S':
			if len(rest) >= seedLength && strings.IndexByte("UAOCNX", rest[1]) >= 0 && allBase32(rest[2:seedLength]) {
				if !(i > 0 && isBase32(text[i-1])) && !(len(rest) > seedLength && isBase32(rest[seedLength])) && validSeed(rest[:seedLength]) {
					return "nats-seed"
				}
				i += seedLength - 1 // a run of base32 in which no other shape can start
			}
		case ':':
			if strings.HasPrefix(rest, "://") && urlPasswordAt(text, i) {
				return "url-password"
			}
		case 'A':
			if (strings.HasPrefix(rest, "AKIA") || strings.HasPrefix(rest, "ASIA")) && !before(text, i, classAlnum) &&
				runOf(rest, 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") >= 16 && !after(rest, 20, classAlnum) && allUpperDigits(rest[4:20]) {
				return "aws-access-key-id"
			}
			if strings.HasPrefix(rest, "AIza") && !before(text, i, classURLSafe) && runOf(rest, 4, classURLSafe) == 35 {
				return "google-api-key"
			}
		case 'g':
			if len(rest) > 4 && rest[:2] == "gh" && strings.IndexByte("pousr", rest[2]) >= 0 && rest[3] == '_' && !before(text, i, classWord) {
				if run := runOf(rest, 4, classAlnum); run >= 36 && !after(rest, 4+run, classWord) {
					return "github-token"
				}
			}
			if strings.HasPrefix(rest, "github_pat_") && !before(text, i, classWord) && runOf(rest, 11, classWord) >= 82 {
				return "github-token"
			}
			if strings.HasPrefix(rest, "glpat-") && !before(text, i, classURLSafe) && runOf(rest, 6, classURLSafe) >= 20 {
				return "gitlab-token"
			}
		case 'x':
			if len(rest) > 5 && rest[:3] == "xox" && strings.IndexByte("abprs", rest[3]) >= 0 && rest[4] == '-' && !before(text, i, classAlnum) {
				digits := runOf(rest, 5, "0123456789")
				if digits > 0 && 5+digits < len(rest) && rest[5+digits] == '-' && runOf(rest, 6+digits, "a-") >= 10 {
					return "slack-token"
				}
			}
		case 'r', 's':
			if (strings.HasPrefix(rest[1:], "k_live_") || strings.HasPrefix(rest[1:], "k_test_")) && !before(text, i, classWord) && runOf(rest, 8, classAlnum) >= 24 {
				return "stripe-key"
			}
			if text[i] == 's' && strings.HasPrefix(rest, "sk-") && !before(text, i, classURLSafe) {
				if key := rest[3 : 3+runOf(rest, 3, classURLSafe)]; len(key) >= 32 && mixedCase(key) {
					return "api-key"
				}
			}
		case 'n':
			if strings.HasPrefix(rest, "npm_") && !before(text, i, classWord) && runOf(rest, 4, classAlnum) == 36 {
				return "npm-token"
			}
		}
	}
	return ""
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func allBase32(text string) bool {
	for i := 0; i < len(text); i++ {
		if !isBase32(text[i]) {
			return false
		}
	}
	return true
}

func allUpperDigits(text string) bool {
	for i := 0; i < len(text); i++ {
		if !isUpper(text[i]) && !isDigit(text[i]) {
			return false
		}
	}
	return true
}

// mixedCase: random text of 32 or more characters has upper case, lower case and digits; a slug does not.
func mixedCase(text string) bool {
	return strings.IndexFunc(text, func(r rune) bool { return r >= 'A' && r <= 'Z' }) >= 0 &&
		strings.IndexFunc(text, func(r rune) bool { return r >= 'a' && r <= 'z' }) >= 0 &&
		strings.ContainsAny(text, "0123456789")
}

// urlPasswordAt: "://" at i follows a scheme (a letter, then letters, digits, + . -) and starts userinfo
// with a non-empty password that is not a placeholder (***, xxx, ${DB_PASSWORD}, {{pw}}, <password>, $PW, %s).
func urlPasswordAt(text string, i int) bool {
	start := i
	for start > 0 && inSet(text[start-1], classSchemeRest) {
		start--
	}
	if start == i || !isLetter(text[start]) {
		return false
	}
	p := i + 3
	for p < len(text) && !isSpace(text[p]) && strings.IndexByte("/?#@:", text[p]) < 0 {
		p++
	}
	if p >= len(text) || text[p] != ':' {
		return false
	}
	q := p + 1
	for q < len(text) && !isSpace(text[q]) && strings.IndexByte("/?#@", text[q]) < 0 {
		q++
	}
	if q == p+1 || q >= len(text) || text[q] != '@' {
		return false
	}
	return !placeholder.MatchString(text[p+1 : q])
}

// hasJWTHeader: a JWT's header segment decodes to a JSON object with "alg".
func hasJWTHeader(segment string) bool {
	if len(segment) > 4096 || len(segment)%4 == 1 {
		return false
	}
	decoded, err := base64.RawURLEncoding.DecodeString(segment)
	if err != nil {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(decoded, &fields) != nil {
		return false
	}
	_, ok := fields["alg"]
	return ok
}

// A NATS seed: "S" and a type letter, then base32 of 36 bytes (58 characters in all) whose last two
// bytes are the CRC16 of the first 34.
const seedLength = 58

func isBase32(c byte) bool { return (c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7') }

func validSeed(candidate string) bool {
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
