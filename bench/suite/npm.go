package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// npmPackages are the npm tools the suite measures, installed with
// `npm install --prefix DIR` into a scratch directory (nothing of theirs
// is committed). agent-browser is pinned to its latest release by tag:
// its newest versions declare node >= 24 for their JavaScript launcher,
// which the suite does not use (it runs the package's native binary), and
// without the tag npm would pick an old version whose engines match.
var npmPackages = []string{"agent-browser@latest", "@playwright/mcp@latest", "chrome-devtools-mcp@latest"}

// npmInstall installs the npm tools into dir unless they are there (or
// update is set). It returns why they cannot be had, or "".
func npmInstall(ctx context.Context, dir string, update bool) string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not installed (apt-get install nodejs npm)"
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "npm is not installed (apt-get install npm)"
	}
	have := true
	for _, p := range []string{"agent-browser", "@playwright/mcp", "chrome-devtools-mcp"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			have = false
		}
	}
	if have && !update {
		return ""
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, npmPackages...)
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 300 {
			msg = msg[len(msg)-300:]
		}
		return fmt.Sprintf("npm install failed: %v: %s", err, msg)
	}
	return ""
}

// npmVersion is the version in a package's package.json.
func npmVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	json.Unmarshal(b, &p)
	return p.Version
}

// npmBin is the file of a package's bin entry.
func npmBin(dir, pkg, name string) (string, error) {
	root := filepath.Join(dir, "node_modules", pkg)
	b, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		return "", fmt.Errorf("%s is not installed in %s", pkg, dir)
	}
	var p struct {
		Bin json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", fmt.Errorf("%s: package.json: %w", pkg, err)
	}
	var one string
	if json.Unmarshal(p.Bin, &one) == nil && one != "" {
		return filepath.Join(root, one), nil
	}
	var many map[string]string
	if json.Unmarshal(p.Bin, &many) == nil && many[name] != "" {
		return filepath.Join(root, many[name]), nil
	}
	return "", fmt.Errorf("%s has no bin %q", pkg, name)
}

// agentBrowserBin is agent-browser's native binary for this machine,
// which its JavaScript launcher would exec.
func agentBrowserBin(dir string) (string, error) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" || runtime.GOOS != "linux" {
		return "", fmt.Errorf("agent-browser: no native binary for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	bin := filepath.Join(dir, "node_modules", "agent-browser", "bin", "agent-browser-linux-"+arch)
	fi, err := os.Stat(bin)
	if err != nil {
		return "", fmt.Errorf("agent-browser is not installed in %s", dir)
	}
	if fi.Mode()&0o111 == 0 {
		os.Chmod(bin, 0o755) // npm does not always keep the mode of the files of a package
	}
	return bin, nil
}

// nodeMajor is the major version of node, or 0.
func nodeMajor() int {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return 0
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _, _ := strings.Cut(v, ".")
	n, _ := strconv.Atoi(major)
	return n
}

// commandVersion is the first line of `name args...`, or "".
func commandVersion(name string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}
