package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// exportedSpan is the part of a span, as the stdout exporter writes it, that
// the spans command prints.
type exportedSpan struct {
	Name        string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ TraceID, SpanID string }
	StartTime   time.Time
	Attributes  []struct {
		Key   string
		Value struct{ Value any }
	}
	Links []struct {
		SpanContext struct{ TraceID, SpanID string }
	}
}

// spansCmd is the script command `spans FILE...`: it reads the spans the
// stdout exporter wrote to the files (one JSON object a line; other lines,
// the program's own output and the metrics, are skipped) and prints one line
// per span in start order: its name and occurrence (`durable attempt pay#2`),
// its trace numbered by first appearance, its parent's (- for a root, ? for a
// span in no file), its links and its attributes, so a script can assert the links between processes.
func spansCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: spans FILE...")
	}
	var spans []exportedSpan
	for _, f := range args {
		sc := bufio.NewScanner(strings.NewReader(ts.ReadFile(f)))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			line := sc.Bytes()
			if !bytes.HasPrefix(line, []byte(`{"Name":`)) {
				continue
			}
			var sp exportedSpan
			if err := json.Unmarshal(line, &sp); err != nil {
				ts.Fatalf("spans: %s: %v", f, err)
			}
			spans = append(spans, sp)
		}
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].StartTime.Before(spans[j].StartTime) })
	labels, seen := map[string]string{}, map[string]int{}
	for _, sp := range spans {
		seen[sp.Name]++
		labels[sp.SpanContext.SpanID] = fmt.Sprintf("%s#%d", sp.Name, seen[sp.Name])
	}
	spanName := func(id string) string {
		if n, ok := labels[id]; ok {
			return n
		}
		return "?"
	}
	var traces []string
	for _, sp := range spans {
		if !slices.Contains(traces, sp.SpanContext.TraceID) {
			traces = append(traces, sp.SpanContext.TraceID)
		}
		parent := "-"
		if sp.Parent.SpanID != "" && sp.Parent.SpanID != "0000000000000000" {
			parent = spanName(sp.Parent.SpanID)
		}
		var attrs []string
		for _, a := range sp.Attributes {
			attrs = append(attrs, fmt.Sprintf("%s=%v", a.Key, a.Value.Value))
		}
		sort.Strings(attrs)
		var links []string
		for _, l := range sp.Links {
			links = append(links, spanName(l.SpanContext.SpanID))
		}
		fmt.Fprintf(ts.Stdout(), "%s | trace %d | parent %s | links [%s] | %s\n", labels[sp.SpanContext.SpanID],
			slices.Index(traces, sp.SpanContext.TraceID)+1, parent, strings.Join(links, ", "), strings.Join(attrs, " "))
	}
}
