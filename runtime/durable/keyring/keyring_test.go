package keyring

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func entry(id string, fill byte) string {
	return id + ":" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{fill}, KeySize))
}

func mustParse(t testing.TB, text string) *Ring {
	t.Helper()
	r, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSealOpensOnlyAtItsPlaceWithItsKey(t *testing.T) {
	r := mustParse(t, entry("k2", 2)+", "+entry("k1", 1))
	if r.Primary() != "k2" || !r.Has("k1") || r.Has("k3") {
		t.Fatalf("ring %v, primary %q", r.IDs(), r.Primary())
	}
	sealed := r.Seal("run-1", "input", `{"card":"4111"}`)
	if id, ok := KeyOf(sealed); !ok || id != "k2" || strings.Contains(sealed, "4111") {
		t.Fatalf("sealed = %q", sealed)
	}
	if json.Valid([]byte(sealed)) {
		t.Errorf("a sealed value is valid JSON, so a plain payload could look like one: %q", sealed)
	}
	if again := r.Seal("run-1", "input", `{"card":"4111"}`); again == sealed {
		t.Error("two seals of one value are equal: the nonce is not fresh")
	}
	plain, err := r.Open("run-1", "input", sealed)
	if err != nil || plain != `{"card":"4111"}` {
		t.Fatalf("Open = %q, %v", plain, err)
	}
	for _, place := range [][2]string{{"run-2", "input"}, {"run-1", "output"}, {"run-1\x00in", "put"}} {
		if _, err := r.Open(place[0], place[1], sealed); !errors.Is(err, ErrNotOpened) {
			t.Errorf("opened at %q/%q: %v; want ErrNotOpened", place[0], place[1], err)
		}
	}
	tampered := sealed[:len(sealed)-2] + "AA"
	if _, err := r.Open("run-1", "input", tampered); !errors.Is(err, ErrNotOpened) {
		t.Errorf("a tampered value: %v; want ErrNotOpened", err)
	}
	// An older key still opens; a ring without the key says which it lacks.
	old := mustParse(t, entry("k1", 1)).Seal("run-1", "input", `1`)
	if plain, err := r.Open("run-1", "input", old); err != nil || plain != "1" {
		t.Errorf("a value sealed with k1: %q, %v", plain, err)
	}
	_, err = mustParse(t, entry("k3", 3)).Open("run-1", "input", old)
	if !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), `key "k1"`) || !strings.Contains(err.Error(), "keys k3") {
		t.Errorf("without the key: %v", err)
	}
	var none *Ring
	if _, err := none.Open("run-1", "input", old); !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), "SKY_DURABLE_KEYS is not set") {
		t.Errorf("with no ring: %v", err)
	}
	if none.Seal("r", "input", "1") != "1" {
		t.Error("a nil ring sealed")
	}
	if plain, err := r.Open("run-1", "input", `"plain"`); err != nil || plain != `"plain"` {
		t.Errorf("a plain value: %q, %v; want it as it is", plain, err)
	}
}

func TestParseNamesTheBadEntryNeverTheKey(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, KeySize))
	for _, tc := range []struct{ text, want string }{
		{"k1", "entry 1 is not id:BASE64"},
		{entry("k1", 1) + ",k2:" + key[:20], `entry 2 (key "k2"): the key is 15 bytes, AES-256 needs 32`},
		{entry("k1", 1) + "," + "k1:" + key, `entry 2: key id "k1" appears twice`},
		{":" + key, `the key id "" must be 1 to 32 characters`},
		{"k/1:" + key, `the key id "k/1" has '/'`},
		{strings.Repeat("k", 33) + ":" + key, "must be 1 to 32 characters"},
		{"k1:" + key + "!", `entry 1 (key "k1"): the key is not base64`},
	} {
		_, err := Parse(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v; want %q", tc.text, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), key[:20]) {
			t.Errorf("Parse(%q): the error shows key material: %v", tc.text, err)
		}
	}
	url := base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, KeySize))
	if r, err := Parse(" k_1-a:" + url + " "); err != nil || r.Primary() != "k_1-a" {
		t.Errorf("URL base64 without padding: %v, %v", r, err)
	}
	if r, err := Parse("  "); r != nil || err != nil {
		t.Errorf("an empty keyring: %v, %v; want none", r, err)
	}
}

// BenchmarkSealOpen is the cost of sealing and opening a 200-byte payload.
func BenchmarkSealOpen(b *testing.B) {
	r := mustParse(b, entry("k1", 1))
	plain := strings.Repeat("x", 200)
	for b.Loop() {
		if _, err := r.Open("run-1", "step:a", r.Seal("run-1", "step:a", plain)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestScopedSealsForItsNamespaceOnly: a value sealed within a scope (a
// namespace's id prefix) opens within that scope only, under the same key
// and run id; the empty scope is the unscoped ring.
func TestScopedSealsForItsNamespaceOnly(t *testing.T) {
	r, err := Parse("k1:" + base64.StdEncoding.EncodeToString(make([]byte, KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.Scoped("a\x1f"), r.Scoped("b\x1f")
	sealed := a.Seal("r1", "input", "secret")
	if got, err := a.Open("r1", "input", sealed); err != nil || got != "secret" {
		t.Fatalf("open in its scope = %q, %v", got, err)
	}
	for name, other := range map[string]*Ring{"another scope": b, "no scope": r, "the empty scope": r.Scoped("")} {
		if _, err := other.Open("r1", "input", sealed); !errors.Is(err, ErrNotOpened) {
			t.Errorf("open in %s = %v; want ErrNotOpened", name, err)
		}
	}
	if got, err := r.Scoped("").Open("r1", "input", r.Seal("r1", "input", "plain scope")); err != nil || got != "plain scope" {
		t.Errorf("the empty scope does not open the unscoped ring's value: %q, %v", got, err)
	}
	var none *Ring
	if none.Scoped("a\x1f") != nil {
		t.Error("a nil ring scoped is not nil")
	}
}
