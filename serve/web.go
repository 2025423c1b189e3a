package serve

import (
	"embed"
	"io/fs"
	"net/http"
)

// webFiles are the web page's files, served at /: plain HTML, CSS and
// JavaScript with no build step and nothing fetched from elsewhere, so the
// page works offline.
//
//go:embed web
var webFiles embed.FS

// webHandler serves webFiles.
func webHandler() http.Handler {
	sub, err := fs.Sub(webFiles, "web")
	if err != nil {
		panic(err) // the directory is embedded: it is there
	}
	return http.FileServerFS(sub)
}
