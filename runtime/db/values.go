package db

import (
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"skydurable/runtime/task"
)

// TimeLayout is how a time.Time argument is stored on SQLite: UTC, fixed
// width with nanoseconds, so comparing the text compares the times.
const TimeLayout = "2006-01-02T15:04:05.000000000Z"

// FormatTime renders t in TimeLayout (UTC).
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Layouts ParseTime accepts: TimeLayout and the forms SQLite's and
// PostgreSQL's own time functions print.
var timeLayouts = []string{
	TimeLayout,
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02",
}

// ParseTime reads a time stored as text (TimeLayout, RFC 3339, or SQLite's
// "YYYY-MM-DD HH:MM:SS[.fff]" which is taken as UTC) and returns it in UTC.
func ParseTime(s string) (time.Time, error) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, task.Errorf(task.Decode,
		"db: %q is not a time; expected text like %q", s, TimeLayout)
}

// convertArgs checks each argument is a supported type and converts it to
// what the driver stores: pointers are dereferenced (nil is NULL), int
// becomes int64, and times become TimeLayout text.
func convertArgs(d Dialect, args []any) ([]any, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := make([]any, len(args))
	for i, a := range args {
		v, err := convertArg(d, a)
		if err != nil {
			return nil, task.Errorf(task.InvalidInput,
				"%s: argument %d is a %T, which the database layer does not accept; "+
					"use nil, string, int, int64, float64, bool, time.Time or []byte", d, i+1, a)
		}
		out[i] = v
	}
	return out, nil
}

func convertArg(d Dialect, a any) (any, error) {
	switch v := a.(type) {
	case nil, string, int64, float64, bool, []byte:
		return v, nil
	case int:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case time.Time:
		// Text on both drivers: SQLite has no time type, and PostgreSQL
		// parses it into a timestamptz/timestamp/date parameter while a
		// TEXT column gets the same text as on SQLite.
		return FormatTime(v), nil
	case *string:
		return deref(d, v)
	case *int:
		return deref(d, v)
	case *int64:
		return deref(d, v)
	case *float64:
		return deref(d, v)
	case *bool:
		return deref(d, v)
	case *time.Time:
		return deref(d, v)
	}
	return nil, fmt.Errorf("unsupported argument type %T", a)
}

func deref[T any](d Dialect, p *T) (any, error) {
	if p == nil {
		return nil, nil
	}
	return convertArg(d, *p)
}

// normalize turns any value a driver returns into one of nil, int64,
// float64, bool, string, []byte or time.Time (UTC).
func normalize(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, bool, string:
		return x
	case []byte:
		return x
	case time.Time:
		return x.UTC()
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case float32:
		// A REAL column holds a float32; widening it bit for bit would read
		// 0.1 as 0.10000000149011612, so keep the decimal the database shows.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		return f
	case [16]byte: // PostgreSQL uuid
		h := hex.EncodeToString(x[:])
		return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	case driver.Valuer:
		if dv, err := x.Value(); err == nil {
			return normalize(dv)
		}
	case fmt.Stringer:
		return x.String()
	case map[string]any, []any:
		if b, err := json.Marshal(x); err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// textOf renders a normalized value as Sky's Db.query shows it. A boolean
// is "1" or "0" on both drivers: SQLite has no boolean type and holds one
// (a BOOLEAN column, a bound Bool, a comparison) as the integer 1 or 0, so
// PostgreSQL's booleans read the same rather than "true"/"false".
func textOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case time.Time:
		return FormatTime(x)
	}
	return fmt.Sprint(v)
}
