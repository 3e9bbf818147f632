package json

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// rawKernel is real Sky's Encode.raw: JSON text, checked, as a Value that
// writes back as the text gave it (object keys in their order, numbers with
// their digits) and that decoders read like any other Value.
func rawKernel() value.Kernel {
	return value.Kernel{Name: "JsonEnc_raw", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
		text, ok := a[0].(string)
		if !ok {
			return nil, value.BadArg("Encode.raw", "JSON text (String)", a[0])
		}
		j, err := parseRaw(text)
		if err != nil {
			return value.Err(value.FromError(task.Errorf(task.Decode,
				"Encode.raw: this is not one JSON value: %v; hint: pass a complete document such as {\"a\":1}", err))), nil
		}
		return value.Ok(wrap(j)), nil
	}}
}

// parseRaw reads JSON text as parse does, but refuses anything after the
// value.
func parseRaw(text string) (any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	j, err := readValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("text follows the JSON value")
	}
	return j, nil
}

// readValue reads the next value of d, each object as a *textObject that
// keeps its keys in the order of the text.
func readValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := &textObject{fields: map[string]any{}}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := readValue(d)
			if err != nil {
				return nil, err
			}
			key := k.(string)
			if _, seen := o.fields[key]; !seen {
				o.keys = append(o.keys, key)
			}
			o.fields[key] = v
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		l := []any{}
		for d.More() {
			v, err := readValue(d)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := d.Token()
		return l, err
	}
	return t, nil
}
