package log

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// withAttrs is a structured log kernel, real Sky's `infoWith : String ->
// List a -> Task Error ()`: the message, then the list read as key, value
// pairs, printed `[INFO] message key=value key2="two words"`. A String value
// is quoted only when it is empty or holds a space, a quote or `=`; any
// other value is shown as Debug.toString shows it. A list of odd length
// fails InvalidInput naming the key without a value, and nothing is written.
func withAttrs(name string, w io.Writer, prefix string, enabled bool, write func(io.Writer, string) (value.Value, error)) value.Kernel {
	fn := "Log." + name[len("Log_"):]
	return value.Kernel{Name: name, Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
		msg, ok := a[0].(string)
		if !ok {
			return nil, value.BadArg(fn, "a String message", a[0])
		}
		attrs, ok := a[1].(*value.List)
		if !ok && a[1] != nil {
			return nil, value.BadArg(fn, "a List of key, value, key, value, ...", a[1])
		}
		return value.Task{T: task.From(func(context.Context) (value.Value, error) {
			text, err := attrLine(fn, msg, attrs.Slice())
			if err != nil {
				return nil, err
			}
			if !enabled {
				return value.Unit{}, nil
			}
			return write(w, prefix+text+"\n")
		})}, nil
	}}
}

// withDict is real Sky's `Log.with : String -> Dict String a -> Task Error
// ()`: an INFO line whose attributes are the Dict's entries, in key order.
func withDict(w io.Writer, write func(io.Writer, string) (value.Value, error)) value.Kernel {
	return value.Kernel{Name: "Log_with", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
		msg, ok := a[0].(string)
		if !ok {
			return nil, value.BadArg("Log.with", "a String message", a[0])
		}
		d, ok := a[1].(*value.Dict)
		if !ok {
			return nil, value.BadArg("Log.with", "a Dict String a of attributes", a[1])
		}
		return value.Task{T: task.From(func(context.Context) (value.Value, error) {
			kv := make([]value.Value, 0, 2*d.Size())
			for i := range d.Size() {
				k, v := d.Entry(i)
				kv = append(kv, k, v)
			}
			text, err := attrLine("Log.with", msg, kv)
			if err != nil {
				return nil, err
			}
			return write(w, "[INFO] "+text+"\n")
		})}, nil
	}}
}

// attrLine renders msg and the key, value pairs of kv.
func attrLine(fn, msg string, kv []value.Value) (string, error) {
	if len(kv)%2 == 1 {
		return "", task.Errorf(task.InvalidInput, "%s %q: the attributes are key, value pairs, but the key %s has no value; hint: write [ \"key\", \"value\", ... ]", fn, msg, value.Show(kv[len(kv)-1]))
	}
	var b strings.Builder
	b.WriteString(oneLine(msg))
	for i := 0; i < len(kv); i += 2 {
		fmt.Fprintf(&b, " %s=%s", attrText(kv[i]), attrText(kv[i+1]))
	}
	return b.String(), nil
}

func attrText(v value.Value) string {
	s, ok := v.(string)
	if !ok {
		return value.Show(v)
	}
	if s == "" || strings.ContainsAny(s, " \t\n\"=") {
		return strconv.Quote(s)
	}
	return s
}
