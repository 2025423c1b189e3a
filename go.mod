module github.com/c4book/c4book

go 1.26.0
