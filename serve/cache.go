package serve

import (
	"container/list"
	"sync"
)

// answerCache keeps the answers that took the solver, by position key (not
// the canonical key: the columns of a position and of its mirror image
// differ), dropping the least recently used past its size. The answers it
// holds are never modified: a hit is copied before its moves are set.
type answerCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recently used; values are *cached
	byKey map[uint64]*list.Element
}

// cached is one entry of an answerCache.
type cached struct {
	key uint64
	a   *Answer
}

// newAnswerCache returns a cache of at most max answers; 0 keeps none.
func newAnswerCache(max int) *answerCache {
	return &answerCache{max: max, order: list.New(), byKey: make(map[uint64]*list.Element)}
}

// get returns the answer kept for key, or nil.
func (c *answerCache) get(key uint64) *Answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached).a
}

// add keeps a under key.
func (c *answerCache) add(key uint64, a *Answer) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		e.Value.(*cached).a = a
		c.order.MoveToFront(e)
		return
	}
	c.byKey[key] = c.order.PushFront(&cached{key: key, a: a})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*cached).key)
	}
}

// len returns the number of answers kept.
func (c *answerCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
