package durable

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"skydurable/runtime/task"
)

// One validation at the API boundary: every name the engine stores (run
// ids, workflow names, step ids, signal and event names, child keys,
// schedule ids, limit keys) and every payload is checked here before a store
// sees it, so both stores only ever hold valid text and a bad value gets the
// same InvalidInput error, naming it, on SQLite and PostgreSQL (SQLite would
// store a NUL or invalid UTF-8 as bytes; PostgreSQL refuses them with driver
// text, and a refused journal write looked like an outage and was retried).

// MaxIDBytes is the longest name the engine stores: a run id, workflow
// name, step id, signal or event name, child key, schedule id or limit key.
const MaxIDBytes = 512

// MaxJSONDepth is the deepest nesting of arrays and objects a stored
// payload may have, given as JSON text or made by a codec in the body. Go's
// JSON encoder stops at 10,000 levels for a whole document, and `sky
// durable show --json` and the dashboard embed a payload a few levels down,
// so a payload at Go's limit was stored but could not be shown
// (TestDeepPayloadStaysInspectable, TestDeepCodecResultFailsTheStep).
const MaxJSONDepth = 1000

// checkDepth refuses valid JSON text nested deeper than MaxJSONDepth with
// an InvalidInput naming it (what, called only then). Text of at most
// 2*MaxJSONDepth bytes cannot be, since each level opens and closes, so most
// payloads cost one comparison.
func checkDepth(what func() string, text string) error {
	if len(text) <= 2*MaxJSONDepth {
		return nil
	}
	if d := jsonDepth(text); d > MaxJSONDepth {
		return task.Errorf(task.InvalidInput, "durable: %s is nested %d levels deep, over the limit of %d; hint: flatten it, or store it in your own table and journal its key",
			what(), d, MaxJSONDepth)
	}
	return nil
}

// jsonDepth is the deepest nesting of arrays and objects in valid JSON text.
func jsonDepth(text string) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// Priorities are stored as 32-bit integers.
const (
	MinPriority = math.MinInt32
	MaxPriority = math.MaxInt32
)

// checkName refuses a name that is empty, longer than MaxIDBytes, not valid
// UTF-8 or holding a control character (C0, DEL, C1: they break logs and
// terminals, and PostgreSQL refuses NUL). what says whose name it is, e.g.
// `the step id "x" of run "r"` is written as what = "the step id",
// where returning ` of run "r"` (nil: nothing). where is called only to
// word a refusal, so a name that passes formats nothing.
func checkName(what, name string, where func() string, hint string) error {
	at := func() string {
		if where == nil {
			return ""
		}
		return where()
	}
	switch {
	case name == "":
		return task.Errorf(task.InvalidInput, "durable: %s%s is empty; hint: %s", what, at(), hint)
	case len(name) > MaxIDBytes:
		return task.Errorf(task.InvalidInput, "durable: %s %s%s is %d bytes, over the limit of %d; hint: %s",
			what, quoteStart(name), at(), len(name), MaxIDBytes, hint)
	case !utf8.ValidString(name):
		i := invalidUTF8At(name)
		return task.Errorf(task.InvalidInput, "durable: %s %q%s is not valid UTF-8 (byte %d); hint: %s", what, name, at(), i, hint)
	}
	if i := strings.IndexFunc(name, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return task.Errorf(task.InvalidInput, "durable: %s %q%s contains the control character %U at byte %d; hint: %s", what, name, at(), r, i, hint)
	}
	return nil
}

// checkText refuses a payload that is not valid UTF-8 (JSON text is).
func checkText(what, text string) error {
	if utf8.ValidString(text) {
		return nil
	}
	return task.Errorf(task.InvalidInput, "durable: %s is not valid UTF-8 (byte %d); hint: JSON text is UTF-8; encode binary data, e.g. as base64",
		what, invalidUTF8At(text))
}

// checkPriority refuses a priority the stores cannot hold.
func checkPriority(runID string, p int) error {
	if p < MinPriority || p > MaxPriority {
		return task.Errorf(task.InvalidInput, "durable: the priority %d of run %q is out of range; hint: a priority between %d and %d (higher runs first)",
			p, runID, MinPriority, MaxPriority)
	}
	return nil
}

// invalidUTF8At is the byte offset of the first invalid UTF-8 sequence.
func invalidUTF8At(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return i
			}
		}
	}
	return len(s)
}

// quoteStart quotes the beginning of a long name for an error.
func quoteStart(name string) string {
	const show = 40
	if len(name) <= show {
		return fmt.Sprintf("%q", name)
	}
	cut := show
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return fmt.Sprintf("%q...", name[:cut])
}

// storableText makes an error's text storable alike by both stores: valid
// UTF-8 (an invalid byte becomes U+FFFD) and no NUL (written \x00), which
// PostgreSQL refuses in text. A step's error is the program's, not input
// the engine can refuse.
func storableText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", `\x00`)
}
