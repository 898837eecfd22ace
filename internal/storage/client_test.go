package storage

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
)

func TestClientAddsAuthAndHeaders(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(tokenFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pwFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		st   config.Storage
		side Side
		want http.Header
	}{
		{
			"write token and headers",
			config.Storage{WriteBearerToken: "w-tok", ReadBearerToken: "r-tok", WriteHeaders: map[string]string{"X-Scope-OrgID": "t1"}},
			Write,
			http.Header{"Authorization": {"Bearer w-tok"}, "X-Scope-Orgid": {"t1"}},
		},
		{
			"read token from file",
			config.Storage{ReadBearerTokenFile: tokenFile, ReadHeaders: map[string]string{"X-A": "b"}},
			Read,
			http.Header{"Authorization": {"Bearer from-file"}, "X-A": {"b"}},
		},
		{
			"basic auth with password file",
			config.Storage{BasicAuth: &config.BasicAuth{Username: "u", PasswordFile: pwFile}},
			Read,
			http.Header{"Authorization": {"Basic dTpzM2NyZXQ="}},
		},
		{"nothing", config.Storage{}, Write, http.Header{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan http.Header, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				h := http.Header{}
				for _, k := range []string{"Authorization", "X-Scope-Orgid", "X-A"} {
					if v := r.Header.Values(k); len(v) > 0 {
						h[k] = v
					}
				}
				got <- h
			}))
			defer srv.Close()
			c, err := NewClient("s", tt.st, tt.side, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if diff := cmp.Diff(tt.want, <-got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClientBadTLSFiles(t *testing.T) {
	_, err := NewClient("s", config.Storage{TLS: config.TLS{CAFile: "/no/such/ca.pem"}}, Read, 1)
	if err == nil || err.Error() != "storage s: tls.caFile: open /no/such/ca.pem: no such file or directory" {
		t.Errorf("got %v", err)
	}
}
