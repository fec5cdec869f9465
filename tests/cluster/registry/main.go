// Command registry is an in-memory OCI registry for Capstan's tests: go-containerregistry's
// pkg/registry handler on a loopback address, with optional authentication.
//
//	registry --addr 127.0.0.1:0                       anonymous
//	registry --addr 127.0.0.1:0 --basic user:pass     every /v2/ request needs basic auth
//	registry --addr 127.0.0.1:0 --token user:pass     Docker registry token flow: /v2/
//	                                                  answers 401 Bearer realm=".../token";
//	                                                  GET (or POST) /token with those
//	                                                  credentials issues a random token
//	--static-token T   a bearer token accepted as well (e.g. a pre-issued registry token)
//	--tls-cert F --tls-key F   serve HTTPS
//	--tags-page N      paginate /tags/list by N tags with a Link header (OCI distribution
//	                   spec); go-containerregistry alone never sends Link
//
// Once listening it prints one line to stdout, `listening on http(s)://127.0.0.1:PORT`, so a
// test can start it on port 0 and read the address back. Requests are logged to stderr.
package main

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/registry"
)

const (
	realmName = "capstan-test"
	service   = "capstan-test"
)

type credentials struct{ user, password string }

func parseCredentials(flagName, value string) (*credentials, error) {
	if value == "" {
		return nil, nil
	}
	user, password, ok := strings.Cut(value, ":")
	if !ok || user == "" {
		return nil, fmt.Errorf("--%s wants user:password", flagName)
	}
	return &credentials{user, password}, nil
}

func (c *credentials) matches(req *http.Request) bool {
	user, password, ok := req.BasicAuth()
	if !ok {
		return false
	}
	// Compare both halves in constant time (a test tool, but no reason to leak).
	u := subtle.ConstantTimeCompare([]byte(user), []byte(c.user))
	p := subtle.ConstantTimeCompare([]byte(password), []byte(c.password))
	return u&p == 1
}

// tokens is the set of bearer tokens issued (or configured) and still valid.
type tokens struct {
	mu  sync.Mutex
	set map[string]bool
}

func (t *tokens) issue() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	token := hex.EncodeToString(b)
	t.add(token)
	return token
}

func (t *tokens) add(token string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.set[token] = true
}

func (t *tokens) valid(token string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return token != "" && t.set[token]
}

func bearer(req *http.Request) string {
	h := req.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// repositoryOf returns the repository name of a /v2/<name>/(manifests|blobs|tags)/... path.
func repositoryOf(path string) string {
	rest := strings.TrimPrefix(path, "/v2/")
	if rest == path {
		return ""
	}
	for _, marker := range []string{"/manifests/", "/blobs/", "/tags/", "/referrers/"} {
		if i := strings.LastIndex(rest, marker); i > 0 {
			return rest[:i]
		}
	}
	return ""
}

func unauthorized(w http.ResponseWriter, challenge string) {
	w.Header().Set("WWW-Authenticate", challenge)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintln(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}`)
}

type server struct {
	basic       *credentials
	token       *credentials
	staticToken string
	tokens      *tokens
	base        string // scheme://host:port, for the token realm
	registry    http.Handler
	tagsPage    int
	logger      *log.Logger
}

func (s *server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if s.token != nil && req.URL.Path == "/token" {
		s.serveToken(w, req)
		return
	}
	if strings.HasPrefix(req.URL.Path, "/v2") && !s.authorized(req) {
		s.logger.Printf("%s %s 401 (no or wrong credentials)", req.Method, req.URL)
		if s.token != nil {
			challenge := fmt.Sprintf(`Bearer realm="%s/token",service="%s"`, s.base, service)
			if repo := repositoryOf(req.URL.Path); repo != "" {
				actions := "pull"
				if req.Method != http.MethodGet && req.Method != http.MethodHead {
					actions = "pull,push"
				}
				challenge += fmt.Sprintf(`,scope="repository:%s:%s"`, repo, actions)
			}
			unauthorized(w, challenge)
		} else {
			unauthorized(w, fmt.Sprintf(`Basic realm="%s"`, realmName))
		}
		return
	}
	if s.tagsPage > 0 && req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v2/") &&
		strings.HasSuffix(req.URL.Path, "/tags/list") {
		s.serveTagsPage(w, req)
		return
	}
	s.registry.ServeHTTP(w, req)
}

func (s *server) authorized(req *http.Request) bool {
	if s.staticToken != "" && subtle.ConstantTimeCompare([]byte(bearer(req)), []byte(s.staticToken)) == 1 {
		return true
	}
	switch {
	case s.basic != nil:
		return s.basic.matches(req)
	case s.token != nil:
		return s.tokens.valid(bearer(req))
	default:
		return true
	}
}

// serveToken answers the Docker registry token endpoint: GET with basic auth (distribution
// token), or POST with a form (OAuth2 password grant, as oras-go may use).
func (s *server) serveToken(w http.ResponseWriter, req *http.Request) {
	ok := false
	switch req.Method {
	case http.MethodGet:
		ok = s.token.matches(req)
	case http.MethodPost:
		if err := req.ParseForm(); err == nil {
			switch req.PostForm.Get("grant_type") {
			case "password":
				ok = subtle.ConstantTimeCompare([]byte(req.PostForm.Get("username")), []byte(s.token.user))&
					subtle.ConstantTimeCompare([]byte(req.PostForm.Get("password")), []byte(s.token.password)) == 1
			case "refresh_token":
				ok = s.tokens.valid(req.PostForm.Get("refresh_token"))
			}
		}
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !ok {
		s.logger.Printf("%s /token 401 (wrong credentials)", req.Method)
		unauthorized(w, fmt.Sprintf(`Basic realm="%s"`, realmName))
		return
	}
	token := s.tokens.issue()
	body := map[string]any{"token": token, "access_token": token, "expires_in": 3600}
	if req.Method == http.MethodPost {
		body["refresh_token"] = token
	}
	s.logger.Printf("%s /token 200 scope=%q", req.Method, req.URL.Query().Get("scope"))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// serveTagsPage lists every tag through the registry, then applies `last` and `n` itself
// (default n: --tags-page) and adds a Link header to the next page.
func (s *server) serveTagsPage(w http.ResponseWriter, req *http.Request) {
	inner := req.Clone(req.Context())
	inner.URL.RawQuery = ""
	inner.RequestURI = ""
	rec := httptest.NewRecorder()
	s.registry.ServeHTTP(rec, inner)
	if rec.Code != http.StatusOK {
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	var list struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	sort.Strings(list.Tags)
	query := req.URL.Query()
	if last := query.Get("last"); last != "" {
		i := sort.SearchStrings(list.Tags, last)
		for i < len(list.Tags) && list.Tags[i] <= last {
			i++
		}
		list.Tags = list.Tags[i:]
	}
	n := s.tagsPage
	if v := query.Get("n"); v != "" {
		parsed, err := strconv.Atoi(v)
		if err != nil || parsed < 0 {
			http.Error(w, "bad n", http.StatusBadRequest)
			return
		}
		n = parsed
	}
	if n < len(list.Tags) {
		list.Tags = list.Tags[:n]
		if n > 0 {
			next := url.Values{"n": {strconv.Itoa(n)}, "last": {list.Tags[n-1]}}
			w.Header().Set("Link", fmt.Sprintf(`<%s?%s>; rel="next"`, req.URL.Path, next.Encode()))
		}
	}
	if list.Tags == nil {
		list.Tags = []string{}
	}
	var body bytes.Buffer
	_ = json.NewEncoder(&body).Encode(list)
	s.logger.Printf("GET %s 200 (%d tags)", req.URL, len(list.Tags))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	_, _ = w.Write(body.Bytes())
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on (port 0: any free port)")
	basicFlag := flag.String("basic", "", "user:password required as basic auth on every /v2/ request")
	tokenFlag := flag.String("token", "", "user:password accepted by /token, which issues bearer tokens for /v2/")
	staticToken := flag.String("static-token", "", "a bearer token always accepted on /v2/")
	tlsCert := flag.String("tls-cert", "", "PEM certificate: serve HTTPS")
	tlsKey := flag.String("tls-key", "", "PEM private key for --tls-cert")
	tagsPage := flag.Int("tags-page", 0, "paginate /tags/list by this many tags with a Link header (0: no pagination)")
	quiet := flag.Bool("quiet", false, "do not log requests")
	flag.Parse()

	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "registry: "+format+"\n", args...)
		os.Exit(2)
	}
	if flag.NArg() != 0 {
		fail("unexpected arguments %q", flag.Args())
	}
	basic, err := parseCredentials("basic", *basicFlag)
	if err != nil {
		fail("%v", err)
	}
	token, err := parseCredentials("token", *tokenFlag)
	if err != nil {
		fail("%v", err)
	}
	if basic != nil && token != nil {
		fail("--basic and --token exclude each other")
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		fail("--tls-cert and --tls-key go together")
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		fail("--addr %q: %v", *addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fail("--addr %q: only loopback addresses are allowed", *addr)
	}

	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		fail("listen on %s: %v", *addr, err)
	}
	scheme := "http"
	if *tlsCert != "" {
		scheme = "https"
	}
	base := fmt.Sprintf("%s://%s", scheme, listener.Addr().String())

	logger := log.New(os.Stderr, "", log.LstdFlags)
	if *quiet {
		logger = log.New(devNull{}, "", 0)
	}
	s := &server{
		basic:       basic,
		token:       token,
		staticToken: *staticToken,
		tokens:      &tokens{set: map[string]bool{}},
		base:        base,
		registry:    registry.New(registry.Logger(logger)),
		tagsPage:    *tagsPage,
		logger:      logger,
	}
	fmt.Printf("listening on %s\n", base)
	_ = os.Stdout.Sync()
	srv := &http.Server{Handler: s, ErrorLog: logger}
	if *tlsCert != "" {
		err = srv.ServeTLS(listener, *tlsCert, *tlsKey)
	} else {
		err = srv.Serve(listener)
	}
	fail("serve: %v", err)
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }
