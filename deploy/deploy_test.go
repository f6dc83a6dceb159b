// Package deploy holds no code: its tests check the packaging files
// (../Dockerfile, ../compose.yaml, Caddyfile, quire.service) against each
// other and against quire's settings. make test-image builds and runs the
// image itself.
package deploy

import (
	"bufio"
	"flag"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/quire-dev/quire/internal/config"
)

// service is the part of a compose service the checks read.
type service struct {
	Image       string
	Build       any
	Command     []string
	Environment map[string]string
	Volumes     []string
	Ports       []string
	DependsOn   any `yaml:"depends_on"`
	Networks    any
}

type compose struct {
	Services map[string]service
	Volumes  map[string]any
}

// dockerfile is the instructions of ../Dockerfile of the final stage, and
// every stage's base image.
type dockerfile struct {
	bases []string
	last  map[string][]string // instruction -> arguments, of the last stage
}

func readDockerfile(t *testing.T) dockerfile {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	d := dockerfile{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, args, _ := strings.Cut(line, " ")
		instr = strings.ToUpper(instr)
		if instr == "FROM" {
			d.bases = append(d.bases, strings.Fields(args)[0])
			d.last = map[string][]string{}
		}
		d.last[instr] = append(d.last[instr], strings.TrimSpace(args))
	}
	return d
}

func TestDockerfile(t *testing.T) {
	d := readDockerfile(t)
	// make test-image builds the base images locally (debootstrap): only
	// Debian 12 can be made that way, and there is no registry to pull from.
	for _, base := range d.bases {
		if base != "debian:bookworm-slim" {
			t.Errorf("base image %s: make test-image can only make debian:bookworm-slim", base)
		}
	}
	if len(d.bases) < 2 {
		t.Error("the Dockerfile is not multi-stage (build, then run)")
	}
	want := map[string]string{"VOLUME": "/data", "USER": "quire", "STOPSIGNAL": "SIGTERM", "EXPOSE": "8080", "CMD": `["serve"]`}
	for instr, v := range want {
		if got := d.last[instr]; len(got) != 1 || got[0] != v {
			t.Errorf("%s %v, want %s", instr, got, v)
		}
	}
	if hc := d.last["HEALTHCHECK"]; len(hc) != 1 || !strings.Contains(hc[0], `["quire", "health"`) {
		t.Errorf("HEALTHCHECK %v: want quire health (the image has no curl)", hc)
	}
	run := strings.Join(d.last["RUN"], " ")
	for _, pkg := range []string{"libreoffice-writer-nogui", "libreoffice-calc", "libreoffice-impress-nogui", "libjemalloc2", "fonts-crosextra-carlito", "fonts-wqy-zenhei", "fonts-noto-core", "fonts-symbola", "fonts-kristi"} {
		if !strings.Contains(run, pkg) {
			t.Errorf("the runtime stage does not install %s", pkg)
		}
	}
	checkLibreOfficeFromBackports(t)
	env := dockerEnv(d)
	if env["QUIRE_DATA_DIR"] != "/data" || env["QUIRE_ADDR"] != ":8080" {
		t.Errorf("ENV %v: want QUIRE_DATA_DIR=/data and QUIRE_ADDR=:8080", env)
	}
	checkSettings(t, "Dockerfile", env)
}

// checkLibreOfficeFromBackports: every apt-get install of the Dockerfile
// that names a LibreOffice package (in either stage: the headers the
// build uses must be those of the LibreOffice the image runs) takes it
// from bookworm-backports, as scripts/setup does.
func checkLibreOfficeFromBackports(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\\\n", " "), "\n") {
		for _, cmd := range strings.Split(line, "&&") {
			if !strings.Contains(cmd, "apt-get install") || !strings.Contains(cmd, "libreoffice") {
				continue
			}
			named++
			if !strings.Contains(cmd, "-t bookworm-backports") {
				t.Errorf("the Dockerfile installs LibreOffice from Debian 12 (7.4), not bookworm-backports: %s", strings.TrimSpace(cmd))
			}
		}
	}
	if named != 2 {
		t.Errorf("the Dockerfile installs LibreOffice packages in %d commands, want 2 (the headers to build, the engine to run)", named)
	}
}

func dockerEnv(d dockerfile) map[string]string {
	env := map[string]string{}
	for _, args := range d.last["ENV"] {
		for _, kv := range strings.Fields(args) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	return env
}

// checkSettings: every QUIRE_* variable set is a setting of quire, and its
// value is one quire accepts.
func checkSettings(t *testing.T, where string, env map[string]string) {
	t.Helper()
	known := map[string]bool{}
	def := config.Default()
	for _, s := range def.Settings() {
		known[s.Env] = true
	}
	var args []string
	for k, v := range env {
		if strings.HasPrefix(k, "QUIRE_") && !known[k] {
			t.Errorf("%s sets %s, which is no setting of quire (internal/config)", where, k)
		}
		if known[k] {
			args = append(args, "--"+flagOf(k)+"="+v)
		}
	}
	fs := flag.NewFlagSet(where, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, _, err := config.Parse(fs, args); err != nil {
		t.Errorf("%s: quire refuses its settings: %v", where, err)
	}
}

func flagOf(env string) string {
	def := config.Default()
	for _, s := range def.Settings() {
		if s.Env == env {
			return s.Flag
		}
	}
	return ""
}

func readCompose(t *testing.T) compose {
	b, err := os.ReadFile("../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return c
}

func TestCompose(t *testing.T) {
	c := readCompose(t)
	d := readDockerfile(t)
	dockerEnvs := dockerEnv(d)
	quires := []string{}
	for name, s := range c.Services {
		if s.Build == nil {
			continue
		}
		if s.Build != "." {
			t.Errorf("%s builds %v, want the repository's Dockerfile (.)", name, s.Build)
		}
		env := map[string]string{}
		for k, v := range dockerEnvs {
			env[k] = v
		}
		for k, v := range s.Environment {
			env[k] = v
		}
		checkSettings(t, "compose.yaml service "+name, env)
		if !slices.Contains(s.Volumes, "shared:"+env["QUIRE_DATA_DIR"]) || env["QUIRE_DATA_DIR"] != d.last["VOLUME"][0] {
			t.Errorf("%s: the shared volume is not its data directory, the image's volume %v: %v", name, d.last["VOLUME"], s.Volumes)
		}
		checkDatabase(t, name, env["QUIRE_DATABASE_URL"], c.Services["db"])
		if len(s.Command) == 0 {
			quires = append(quires, name)
			if _, port, _ := net.SplitHostPort(env["QUIRE_ADDR"]); port != d.last["EXPOSE"][0] {
				t.Errorf("%s listens on %q, the image exposes %v", name, env["QUIRE_ADDR"], d.last["EXPOSE"])
			}
		}
	}
	if len(quires) < 2 {
		t.Fatalf("compose.yaml runs %d quire instances, want 2 behind the proxy", len(quires))
	}
	for _, v := range []string{"db", "shared"} {
		if _, ok := c.Volumes[v]; !ok {
			t.Errorf("volume %s is not declared", v)
		}
	}
	checkProxy(t, c, quires)
}

// checkDatabase: the instances reach the PostgreSQL service with its own
// user, password and database.
func checkDatabase(t *testing.T, name, raw string, db service) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "postgres" {
		t.Fatalf("%s: QUIRE_DATABASE_URL %q is not PostgreSQL", name, raw)
	}
	pw, _ := u.User.Password()
	if u.Hostname() != "db" || u.User.Username() != db.Environment["POSTGRES_USER"] || pw != db.Environment["POSTGRES_PASSWORD"] ||
		strings.TrimPrefix(u.Path, "/") != db.Environment["POSTGRES_DB"] {
		t.Errorf("%s: QUIRE_DATABASE_URL %q does not match the db service %v", name, raw, db.Environment)
	}
}

// checkProxy: the Caddyfile sends requests to every instance on its port,
// asks their readiness, and the instances trust the proxy's address.
func checkProxy(t *testing.T, c compose, quires []string) {
	t.Helper()
	proxy, ok := c.Services["proxy"]
	if !ok {
		t.Fatal("compose.yaml has no proxy service")
	}
	mount := "./deploy/Caddyfile:/etc/caddy/Caddyfile:ro"
	if !slices.Contains(proxy.Volumes, mount) {
		t.Errorf("the proxy does not mount %s", mount)
	}
	b, err := os.ReadFile("Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	caddy := string(b)
	m := regexp.MustCompile(`reverse_proxy ([^{\n]+)`).FindStringSubmatch(caddy)
	if m == nil {
		t.Fatal("the Caddyfile has no reverse_proxy")
	}
	upstreams := strings.Fields(m[1])
	var want []string
	for _, q := range quires {
		want = append(want, q+":8080")
	}
	slices.Sort(upstreams)
	slices.Sort(want)
	if !slices.Equal(upstreams, want) {
		t.Errorf("the proxy routes to %v, want every instance: %v", upstreams, want)
	}
	if !strings.Contains(caddy, "health_uri /v1/health\n") {
		t.Error("the proxy does not ask the instances' readiness (health_uri /v1/health)")
	}
	nets, _ := proxy.Networks.(map[string]any)
	quireNet, _ := nets["quire"].(map[string]any)
	ipText, _ := quireNet["ipv4_address"].(string)
	ip, err := netip.ParseAddr(ipText)
	if err != nil {
		t.Fatalf("the proxy has no fixed address on the quire network: %v", err)
	}
	for _, q := range quires {
		var trusted config.Prefixes
		if err := trusted.Set(c.Services[q].Environment["QUIRE_TRUSTED_PROXIES"]); err != nil || !slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(ip) }) {
			t.Errorf("%s does not trust the proxy at %s (QUIRE_TRUSTED_PROXIES %q)", q, ip, c.Services[q].Environment["QUIRE_TRUSTED_PROXIES"])
		}
	}
}

// TestSystemdUnit: systemd-analyze verify accepts the unit without a
// warning. Its ExecStart binary must exist, so the check runs on a copy
// pointing at this test's own executable.
func TestSystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze is missing: apt-get install systemd")
	}
	unit, err := os.ReadFile("quire.service")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	text := strings.Replace(string(unit), "ExecStart=/usr/local/bin/quire ", "ExecStart="+self+" ", 1)
	if text == string(unit) {
		t.Fatal("the unit does not start /usr/local/bin/quire")
	}
	for _, want := range []string{"DynamicUser=yes", "StateDirectory=quire", "Environment=QUIRE_DATA_DIR=/var/lib/quire",
		"ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes", "KillSignal=SIGTERM"} {
		if !strings.Contains(text, "\n"+want+"\n") {
			t.Errorf("the unit lacks %s", want)
		}
	}
	path := filepath.Join(t.TempDir(), "quire.service")
	os.WriteFile(path, []byte(text), 0o644)
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify (%v):\n%s", err, out)
	}
}
