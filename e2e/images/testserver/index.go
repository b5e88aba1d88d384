package main

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
)

// packageIndex is a PEP 503 "simple" package index of wheels built in memory, so the e2e suite
// installs a code Transform's dependency (pip, from the Transform's requirements) from inside the
// cluster, where no public index is reachable:
//
//	GET /simple/             the projects, one link each
//	GET /simple/<project>/   the project's files, each link ending #sha256=<digest>, which pip checks
//	GET /packages/<file>     a file's bytes
//
// Links are relative, so the index works under any prefix (the API server's pod proxy, say).
type packageIndex struct{ wheels []wheel }

func (x packageIndex) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /simple/{$}", x.projects)
	mux.HandleFunc("GET /simple/{project}/{$}", x.files)
	mux.HandleFunc("GET /packages/{file}", x.file)
}

func (x packageIndex) projects(w http.ResponseWriter, _ *http.Request) {
	var links strings.Builder
	seen := map[string]bool{}
	for _, wh := range x.wheels {
		if !seen[wh.project] {
			seen[wh.project] = true
			fmt.Fprintf(&links, "<a href=\"%s/\">%s</a><br>\n", html.EscapeString(wh.project), html.EscapeString(wh.project))
		}
	}
	writePage(w, "Simple index", links.String())
}

func (x packageIndex) files(w http.ResponseWriter, r *http.Request) {
	project := normalizeProject(r.PathValue("project"))
	var links strings.Builder
	for _, wh := range x.wheels {
		if wh.project == project {
			fmt.Fprintf(&links, "<a href=\"../../packages/%s#sha256=%s\">%s</a><br>\n",
				html.EscapeString(wh.filename), wh.sha256, html.EscapeString(wh.filename))
		}
	}
	if links.Len() == 0 {
		http.Error(w, "no project "+project+" in this index", http.StatusNotFound)
		return
	}
	writePage(w, "Links for "+project, links.String())
}

func (x packageIndex) file(w http.ResponseWriter, r *http.Request) {
	for _, wh := range x.wheels {
		if wh.filename == r.PathValue("file") {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(wh.data)
			return
		}
	}
	http.NotFound(w, r)
}

// writePage answers an index page. pip reads only pages of an HTML content type.
func writePage(w http.ResponseWriter, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\"><title>%s</title></head><body>\n%s</body></html>\n",
		html.EscapeString(title), body)
}

var projectSeparators = regexp.MustCompile(`[-_.]+`)

// normalizeProject is PEP 503's normalized name, the one pip asks for: runs of "-", "_" and "."
// become one "-", in lower case.
func normalizeProject(name string) string {
	return strings.ToLower(projectSeparators.ReplaceAllString(name, "-"))
}
