package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNewPlanValidates(t *testing.T) {
	if _, err := newPlan("", "node-1"); err == nil || !strings.Contains(err.Error(), "--dir") {
		t.Fatalf("empty dir: got %v", err)
	}
	for _, bad := range []string{"", "Node", "a/b", strings.Repeat("x", 64), "-a"} {
		if _, err := newPlan(t.TempDir(), bad); err == nil {
			t.Errorf("node name %q accepted", bad)
		}
	}
	p, err := newPlan(t.TempDir(), "node-1")
	if err != nil {
		t.Fatal(err)
	}
	if p.AdminToken == p.NodeToken || len(p.AdminToken) != 48 {
		t.Fatalf("tokens not random and distinct: %q %q", p.AdminToken, p.NodeToken)
	}
}

func TestTokenFileNamesTheNodeIdentity(t *testing.T) {
	p := &plan{Dir: "/d", NodeName: "n1", AdminToken: "a", NodeToken: "b"}
	want := "a,drasim-admin,drasim-admin,\"system:masters\"\nb,system:node:n1,system:node:n1,\"system:nodes\"\n"
	if got := p.tokenFileContents(); got != want {
		t.Fatalf("token file:\n%s\nwant:\n%s", got, want)
	}
}

func TestFlagsEnableWhatDrasimNeeds(t *testing.T) {
	p := &plan{Dir: "/d", NodeName: "n1"}
	joined := strings.Join(p.apiserverFlags("http://127.0.0.1:1"), " ")
	for _, want := range []string{
		"--authorization-mode=Node,RBAC", "--bind-address=127.0.0.1", "--etcd-servers=http://127.0.0.1:1",
		"resource.k8s.io/v1beta1=true", "resource.k8s.io/v1beta2=true", "--token-auth-file=/d/tokens.csv",
		"--enable-admission-plugins=NodeRestriction",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("flags lack %q: %s", want, joined)
		}
	}
}

func TestRunnerRulesMatchTheDocumentedRole(t *testing.T) {
	got := map[string][]string{}
	for _, r := range runnerRules() {
		for _, res := range r.Resources {
			got[r.APIGroups[0]+"/"+res] = r.Verbs
		}
	}
	want := map[string]string{
		"/namespaces":                                   "get list create delete",
		"/nodes":                                        "get list create delete",
		"/pods":                                         "get list create delete",
		"/pods/status":                                  "get update patch",
		"resource.k8s.io/resourceclaims":                "get list watch create update patch delete",
		"resource.k8s.io/resourceclaims/status":         "get update patch",
		"resource.k8s.io/resourceclaims/binding":        "update patch",
		"resource.k8s.io/resourceslices":                "get list watch create update patch delete deletecollection",
		"authorization.k8s.io/selfsubjectaccessreviews": "create",
	}
	for res, verbs := range want {
		if strings.Join(got[res], " ") != verbs {
			t.Errorf("%s: verbs %v, want %s", res, got[res], verbs)
		}
	}
}

func TestKubeconfigAndReadyLine(t *testing.T) {
	cfg := kubeconfigFor("https://127.0.0.1:9", []byte("CA"), "u", "tok")
	ctx := cfg.Contexts[cfg.CurrentContext]
	if cfg.Clusters[ctx.Cluster].Server != "https://127.0.0.1:9" || cfg.AuthInfos[ctx.AuthInfo].Token != "tok" {
		t.Fatalf("kubeconfig: %+v", cfg)
	}
	p := &plan{Dir: "/d", NodeName: "n1"}
	var r ready
	if err := json.Unmarshal([]byte(p.readyLine("https://127.0.0.1:9", 9, "http://127.0.0.1:8", 8, 7, 42, "v1.37.2")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Port != 9 || r.EtcdPort != 8 || r.Kubeconfigs["driver"] != "/d/driver.kubeconfig" || r.Kubeconfigs["node"] != "/d/node.kubeconfig" {
		t.Fatalf("ready line: %+v", r)
	}
}
