package meshstate

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"
)

func TestFieldNameWords(t *testing.T) {
	for name, want := range map[string]string{
		"APIKey":                "api key",
		"x-api-key":             "x api key",
		"oauthAccessToken2":     "oauth access token",
		"HTTPServer.port 8080":  "http server port",
		"SECRET_KEY":            "secret key",
		"already.lower_case-ok": "already lower case ok",
		"ABc":                   "a bc",
		"":                      "",
		"123":                   "",
	} {
		if got := strings.Join(fieldNameWords(name), " "); got != want {
			t.Errorf("fieldNameWords(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestCredentialFieldNames(t *testing.T) {
	refused := []string{"access_token", "Authorization", "clientSecret", "x-api-key", "SECRET_KEY", "password1", "APIKey", "apiKeys", "private_key", "signing keys", "cookie"}
	for _, word := range []string{"password", "passwords", "passwd", "pwd", "passphrase", "secret", "secrets", "token", "authorization", "credential", "credentials", "cookie", "cookies", "apikey", "apikeys"} {
		refused = append(refused, word, "my_"+strings.ToUpper(word), word+"_2")
	}
	for _, first := range []string{"api", "private", "access", "secret", "signing", "encryption"} {
		for _, last := range []string{"key", "keys"} {
			refused = append(refused, first+"."+last, first+strings.ToUpper(last[:1])+last[1:])
		}
	}
	for _, name := range refused {
		if !isCredentialFieldName(name) {
			t.Errorf("%q passed", name)
		}
	}
	for _, name := range []string{"max_tokens", "tokens", "tokenizer", "secretName", "key", "publicKey", "tokenCount", "password_hint", "secretsManagerArn", "cookiePolicy", "keyId", "sshKey", "monkey", "", "123"} {
		if isCredentialFieldName(name) {
			t.Errorf("%q refused", name)
		}
	}
}

func TestFindSecretPathsAndOrder(t *testing.T) {
	for value, want := range map[string]string{
		`{"headers":{"Authorization":"Bearer x"}}`:                     "headers.Authorization",
		`{"servers":[{"name":"a"},{"env":{"GITHUB_TOKEN":"x"}}]}`:      "servers[1].env.GITHUB_TOKEN",
		`[{"ok":1},{"signing keys":[]}]`:                               `[1]["signing keys"]`,
		`{"password":null}`:                                            "password",
		`{"a":{"password":1},"token":2}`:                               "a.password",
		`{"a":{"ok":1},"token":2,"b":{"secret":3}}`:                    "token",
		`{"__proto__":{"apiKey":"x"}}`:                                 "__proto__.apiKey",
		`{"a b":{"$x":{"k-1":{"c<d":{"pwd":1}}}}}`:                     `["a b"].$x.k-1["c<d"].pwd`,
		`{"x":{"y":1}}`:                                                "",
		`{"max_tokens":10,"publicKey":"…","note":"password: hunter2"}`: "",
	} {
		finding, found, err := FindSecret(json.RawMessage(value))
		if err != nil || found != (want != "") || finding.Path != want {
			t.Errorf("%s: %+v %v %v, want %q", value, finding, found, err, want)
		}
	}
	deep := strings.Repeat("[", 200) + `{"token":1}` + strings.Repeat("]", 200)
	if finding, _, _ := FindSecret(json.RawMessage(deep)); finding.Path != strings.Repeat("[0]", 200)+".token" {
		t.Errorf("deep: %q", finding.Path)
	}
}

// --- a corpus of credentials, made fresh for each run (nothing real-looking is committed) ---

func randomText(alphabet string, length int) string {
	out := make([]byte, length)
	raw := make([]byte, length)
	_, _ = rand.Read(raw)
	for i := range out {
		out[i] = alphabet[int(raw[i])%len(alphabet)]
	}
	return string(out)
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	alnum       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	urlSafe     = alnum + "_-"
)

// nkey encodes a NATS key the way nkeys does: prefix byte(s), 32 bytes, CRC16 little-endian, base32.
func nkey(seed bool, prefix byte) string {
	body := make([]byte, 32)
	_, _ = rand.Read(body)
	var raw []byte
	if seed {
		raw = []byte{18<<3 | prefix>>5, (prefix & 31) << 3}
	} else {
		raw = []byte{prefix}
	}
	raw = append(raw, body...)
	crc := crc16(raw)
	raw = append(raw, byte(crc), byte(crc>>8))
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw)
}

const (
	prefixUser     = 20 << 3
	prefixAccount  = 0
	prefixOperator = 14 << 3
	prefixServer   = 13 << 3
	prefixCluster  = 2 << 3
)

func signedJWT(header map[string]any) string {
	encode := func(value any) string {
		data, _ := json.Marshal(value)
		return base64.RawURLEncoding.EncodeToString(data)
	}
	signing := encode(header) + "." + encode(map[string]any{"sub": randomText(upperDigits, 12), "iat": time.Now().Unix()})
	mac := hmac.New(sha256.New, []byte(randomText(alnum, 32)))
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func pemBlock(kind string, body []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: body}))
}

func credentialCorpus(t *testing.T) map[string][]string {
	t.Helper()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	pkcs8 := func(key any) []byte { data, _ := x509.MarshalPKCS8PrivateKey(key); return data }
	ecDER, _ := x509.MarshalECPrivateKey(ecKey)
	random := func(n int) []byte { data := make([]byte, n); _, _ = rand.Read(data); return data }
	userJWT := signedJWT(map[string]any{"typ": "JWT", "alg": "ed25519-nkey"})
	creds := "-----BEGIN NATS USER JWT-----\n" + userJWT + "\n------END NATS USER JWT------\n\n************************* IMPORTANT *************************\n\n-----BEGIN USER NKEY SEED-----\n" + nkey(true, prefixUser) + "\n------END USER NKEY SEED------\n"
	corpus := map[string][]string{
		"pem-private-key": {
			pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), pemBlock("PRIVATE KEY", pkcs8(rsaKey)),
			pemBlock("EC PRIVATE KEY", ecDER), pemBlock("PRIVATE KEY", pkcs8(ecKey)), pemBlock("PRIVATE KEY", pkcs8(edKey)),
			pemBlock("OPENSSH PRIVATE KEY", random(400)), pemBlock("ENCRYPTED PRIVATE KEY", random(600)),
			"key:\n" + pemBlock("DSA PRIVATE KEY", random(300)),
		},
		"nats-creds": {creds, strings.ReplaceAll(creds, "\n", "\r\n")},
		"nats-seed":  {},
		"jwt": {
			userJWT, signedJWT(map[string]any{"alg": "HS256", "typ": "JWT"}), signedJWT(map[string]any{"alg": "RS256", "kid": "k1"}),
			"token=" + signedJWT(map[string]any{"alg": "ES256"}) + "; path=/",
		},
		"bearer-token": {
			"Bearer " + randomText(alnum, 40), "bearer " + randomText(urlSafe, 24) + "1", "Authorization: Bearer " + randomText(alnum, 30) + "9",
			"Bearer " + signedJWT(map[string]any{"alg": "HS256"}),
		},
		"url-password": {
			"postgres://app:" + randomText(alnum, 16) + "@db:5432/app", "redis://:" + randomText(alnum, 20) + "@cache:6379/0",
			"https://deploy:" + randomText(alnum, 12) + "@git.example.com/repo.git", "connect with mysql://root:" + randomText(alnum, 10) + "@127.0.0.1/x please",
			"amqp://guest:guest@rabbit:5672/",
		},
	}
	for range 4 {
		for _, prefix := range []byte{prefixUser, prefixAccount, prefixOperator, prefixServer, prefixCluster} {
			corpus["nats-seed"] = append(corpus["nats-seed"], nkey(true, prefix))
		}
	}
	corpus["nats-seed"] = append(corpus["nats-seed"], "seed: "+nkey(true, prefixUser)+"\n")
	for range 4 {
		corpus["aws-access-key-id"] = append(corpus["aws-access-key-id"], "AKIA"+randomText(upperDigits, 16), "ASIA"+randomText(upperDigits, 16), "aws_access_key_id = AKIA"+randomText(upperDigits, 16))
		corpus["github-token"] = append(corpus["github-token"], "ghp_"+randomText(alnum, 36), "gho_"+randomText(alnum, 36), "ghs_"+randomText(alnum, 36), "github_pat_"+randomText(alnum+"_", 82))
		corpus["gitlab-token"] = append(corpus["gitlab-token"], "glpat-"+randomText(urlSafe, 20))
		corpus["slack-token"] = append(corpus["slack-token"], "xoxb-"+randomText("0123456789", 12)+"-"+randomText("0123456789", 13)+"-"+randomText(alnum, 24), "xoxp-"+randomText("0123456789", 11)+"-"+randomText(alnum, 30))
		corpus["stripe-key"] = append(corpus["stripe-key"], "sk_live_"+randomText(alnum, 24), "rk_live_"+randomText(alnum, 40), "sk_test_"+randomText(alnum, 30))
		corpus["google-api-key"] = append(corpus["google-api-key"], "AIza"+randomText(urlSafe, 35))
		corpus["npm-token"] = append(corpus["npm-token"], "npm_"+randomText(alnum, 36))
		corpus["api-key"] = append(corpus["api-key"], "sk-"+randomText(alnum, 48), "sk-proj-"+randomText(urlSafe, 100), "sk-ant-api03-"+randomText(urlSafe, 80))
	}
	return corpus
}

// Every credential of the corpus is refused with its kind, bare, under innocent names, nested and in an
// array, at the right path — and the refusal never carries the value or a part of it.
func TestCredentialShapesAreRefused(t *testing.T) {
	placements := []struct {
		wrap func(string) any
		path string
	}{
		{func(s string) any { return s }, ""},
		{func(s string) any { return map[string]any{"note": s} }, "note"},
		{func(s string) any { return map[string]any{"NOTE": s} }, "NOTE"},
		{func(s string) any { return map[string]any{"a": map[string]any{"text": []any{1, s}}} }, "a.text[1]"},
		{func(s string) any { return []any{"fine", map[string]any{"x y": s}} }, `[1]["x y"]`},
	}
	total := 0
	runtime := newFakeRuntime(func(string, json.RawMessage) (any, error) { return map[string]any{"revision": 1}, nil })
	bucket := State[any](Attach(runtime), "notes")
	for kind, values := range credentialCorpus(t) {
		for _, value := range values {
			for _, placement := range placements {
				total++
				_, err := bucket.Put(testContext(t), "all.x", placement.wrap(value))
				var refused *StateError
				if !errors.As(err, &refused) || refused.Reason != ReasonSecretField || refused.Kind != kind || refused.Path != placement.path {
					t.Errorf("%s at %q: got %v (kind %q path %q)", kind, placement.path, err, kindOf(err), pathOf(err))
					continue
				}
				shown := fmt.Sprintf("%v %v %+v", refused.Error(), refused.Message, refused.Data)
				for _, part := range strings.FieldsFunc(value, func(r rune) bool { return r == '\n' || r == ' ' || r == ':' || r == '@' || r == '/' }) {
					if len(part) >= 12 && strings.Contains(shown, part) {
						t.Errorf("%s: the refusal echoes the value: %s", kind, shown)
					}
				}
			}
		}
	}
	if len(runtime.requests("")) != 0 || total < 5*100 {
		t.Fatalf("sent %d requests, %d cases", len(runtime.requests("")), total)
	}
}

func kindOf(err error) string {
	var refused *StateError
	if errors.As(err, &refused) {
		return refused.Kind
	}
	return ""
}

func pathOf(err error) string {
	var refused *StateError
	if errors.As(err, &refused) {
		return refused.Path
	}
	return ""
}

// What must pass: public keys, certificates, UUIDs, hashes, git SHAs, data URLs, URLs without a
// password, prose about credentials, and near misses of every shape.
func TestLookAlikesPass(t *testing.T) {
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	publicDER, _ := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mesh"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	certificate, _ := x509.CreateCertificate(rand.Reader, template, template, &ecKey.PublicKey, ecKey)
	edPublic, _, _ := ed25519.GenerateKey(rand.Reader)
	sshBlob := append([]byte{0, 0, 0, 11}, []byte("ssh-ed25519")...)
	sshBlob = append(append(sshBlob, 0, 0, 0, 32), edPublic...)
	random := func(n int) []byte { data := make([]byte, n); _, _ = rand.Read(data); return data }
	uuid := func() string {
		b := random(16)
		return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	}
	sha := sha256.Sum256(random(8))
	gitSHA := sha1.Sum(random(8))
	lookAlikes := []string{
		pemBlock("PUBLIC KEY", publicDER), pemBlock("CERTIFICATE", certificate), pemBlock("RSA PUBLIC KEY", random(140)),
		"ssh-ed25519 " + base64.StdEncoding.EncodeToString(sshBlob) + " operator@node-1",
		hex.EncodeToString(sha[:]), hex.EncodeToString(gitSHA[:]), "sha256:" + hex.EncodeToString(sha[:]), base64.StdEncoding.EncodeToString(sha[:]),
		"data:image/png;base64," + base64.StdEncoding.EncodeToString(random(3000)),
		"data:application/json;base64," + base64.StdEncoding.EncodeToString([]byte(`{"alg":"none","a":1}`)),
		"https://mcp.github.example/", "https://example.com/a?b=c:d@e", "ssh://git@github.com/org/repo.git", "postgres://app@db:5432/app",
		"https://user@host.example/path", "mailto:ops@example.com", "http://127.0.0.1:8080/mcp", "nats://10.0.0.5:4222",
		"Set the password in the vault, never here.", "Bearer tokens go in the Authorization header.", "Bearer authentication",
		"The private key never leaves the machine; -----BEGIN PUBLIC KEY----- blocks are fine.",
		"rotate the API key and the access token every 90 days", "token", "password: see vault/ops/db",
		"BEGIN PRIVATE KEY without the dashes", "sk-learn is a library", "AKIA is a prefix of AWS key ids",
		"ghp_short", "npm_" + randomText(alnum, 10), "glpat-short", "xoxb-", "AIza" + randomText(urlSafe, 20),
		"eyJub3QiOiJhIGp3dCJ9.eyJhIjoxfQ.c2ln", "a.b.c", "v1.2.3", "node-1.github.all", "1.2.3.4",
		"SU" + randomText("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 56), // a seed's shape with a wrong checksum
	}
	for range 12 {
		lookAlikes = append(lookAlikes, nkey(false, prefixUser), nkey(false, prefixAccount), uuid(), hex.EncodeToString(random(20)),
			"AKIA"+randomText(upperDigits, 10), "ghp_"+randomText(alnum, 20), "The "+randomText("abcdefghij", 8)+" token expired")
	}
	if len(lookAlikes) < 100 {
		t.Fatalf("only %d look-alikes", len(lookAlikes))
	}
	for _, value := range lookAlikes {
		encoded, _ := json.Marshal(map[string]any{"note": value, "list": []string{value}})
		if finding, found, err := FindSecret(encoded); found || err != nil {
			t.Errorf("refused %q as %+v (%v)", value, finding, err)
		}
	}
}
