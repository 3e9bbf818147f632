package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// httpCommands are the testscript commands of the Std.Http.Server scripts:
//
//	freeport VAR                 set VAR to a TCP port free on 127.0.0.1 now
//	http METHOD URL [BODY]       send a request; stdout is "STATUS BODY"
//
// http waits (up to 30 s) for the server to accept connections, so a script
// can start `sky run` in the background and send its first request at once.
func httpCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"freeport": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: freeport VAR")
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			ts.Check(err)
			port := l.Addr().(*net.TCPAddr).Port
			ts.Check(l.Close())
			ts.Setenv(args[0], strconv.Itoa(port))
		},
		"http": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) < 2 || len(args) > 3 {
				ts.Fatalf("usage: http METHOD URL [BODY]")
			}
			body := ""
			if len(args) == 3 {
				body = args[2]
			}
			status, text, err := sendWhenUp(args[0], args[1], body)
			if err != nil {
				ts.Fatalf("http %s %s: %v", args[0], args[1], err)
			}
			fmt.Fprintf(ts.Stdout(), "%d %s\n", status, strings.TrimSpace(text))
		},
	}
}

// sendWhenUp sends one request, retrying while the connection is refused
// (the server is still starting), for up to 30 s.
func sendWhenUp(method, url, body string) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		if err != nil {
			return 0, "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			return resp.StatusCode, string(data), err
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || ctx.Err() != nil {
			return 0, "", err
		}
		select {
		case <-ctx.Done():
			return 0, "", err
		case <-time.After(20 * time.Millisecond):
		}
	}
}
