/* Flame graphs as SVG; see host/flame.h. Layout after flamegraph.pl (Brendan Gregg). */
#include "host/flame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH   1200.0 /* flamegraph.pl's default image width, pixels */
#define FRAME_H 16     /* pixels per frame */
#define PAD     10     /* left and right margins */
#define TOP     40     /* the title's room */
#define CHAR_W  (12 * 0.59) /* flamegraph.pl's width of a 12-pixel character */

struct node {
	char *name;
	uint64_t count;
	struct node *child, *next; /* children in alphabetical order */
};

static struct node *child_named(struct node *p, const char *name, size_t len)
{
	struct node **at = &p->child;

	for (; *at; at = &(*at)->next) {
		int c = strncmp((*at)->name, name, len);
		if (c == 0 && (*at)->name[len] == 0)
			return *at;
		if (c > 0 || (c == 0 && (*at)->name[len] > 0))
			break;
	}
	struct node *n = calloc(1, sizeof(*n));
	if (!n || !(n->name = strndup(name, len)))
		return NULL;
	n->next = *at;
	*at = n;
	return n;
}

/* Adds one folded stack to the tree under root; -1 when out of memory. */
static int add_stack(struct node *root, const char *stack, uint64_t count)
{
	struct node *n = root;

	root->count += count;
	for (const char *p = stack; *p;) {
		size_t len = strcspn(p, ";");
		if (!(n = child_named(n, p, len)))
			return -1;
		n->count += count;
		p += len + (p[len] == ';');
	}
	return 0;
}

static int depth_of(const struct node *n)
{
	int d = 0;
	for (const struct node *c = n->child; c; c = c->next) {
		int k = depth_of(c);
		d = k > d ? k : d;
	}
	return d + 1;
}

/* flamegraph.pl's "hot" palette, from a hash of the name so a function keeps its colour. */
static void colour(const char *name, int rgb[3])
{
	unsigned h = 2166136261u; /* FNV-1a */
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	rgb[0] = 205 + h % 51;
	rgb[1] = (h >> 8) % 231;
	rgb[2] = (h >> 16) % 56;
}

static void xml_text(FILE *f, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++) {
		switch (s[i]) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(s[i], f);
		}
	}
}

/* One frame's box at depth d (0: the bottom), then its children's, left to right. */
static void draw(FILE *f, const struct node *n, double x, int d, int height, uint64_t total)
{
	double w = (WIDTH - 2 * PAD) * n->count / total;
	int rgb[3], y = height - FRAME_H * (d + 1) - PAD;
	size_t fit = w > 3 * CHAR_W ? (size_t)(w / CHAR_W) : 0;

	if (w < 0.1) /* flamegraph.pl's --minwidth: too narrow to see */
		return;
	colour(n->name, rgb);
	fprintf(f, "<g class=\"f\" data-x=\"%.2f\" data-w=\"%.2f\" data-d=\"%d\"><title>", x, w, d);
	xml_text(f, n->name, SIZE_MAX);
	fprintf(f, " (%llu samples, %.2f%%)</title>\n<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"fill=\"rgb(%d,%d,%d)\" rx=\"2\"/><text x=\"%.2f\" y=\"%d\">", (unsigned long long)n->count,
		100.0 * n->count / total, x, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2], x + 3, y + FRAME_H - 5);
	if (fit)
		xml_text(f, n->name, strlen(n->name) > fit ? fit - 2 : fit);
	if (fit && strlen(n->name) > fit)
		fputs("..", f);
	fputs("</text></g>\n", f);
	for (const struct node *c = n->child; c; c = c->next) {
		draw(f, c, x, d + 1, height, total);
		x += (WIDTH - 2 * PAD) * c->count / total;
	}
}

static void free_tree(struct node *n)
{
	while (n) {
		struct node *next = n->next;
		free_tree(n->child);
		free(n->name);
		free(n);
		n = next;
	}
}

/* Click to zoom: boxes above the clicked one are stretched to the width, the others greyed out. */
static const char zoom_js[] =
	"function zoom(g){var x=+g.dataset.x,w=+g.dataset.w,d=+g.dataset.d,W=%.2f,P=%d;\n"
	"document.querySelectorAll('g.f').forEach(function(e){var ex=+e.dataset.x,ew=+e.dataset.w,"
	"ed=+e.dataset.d,r=e.querySelector('rect'),t=e.querySelector('text');\n"
	"var inside=ex>=x-0.01&&ex+ew<=x+w+0.01&&ed>=d;e.style.opacity=inside||ed<d?1:0.15;\n"
	"var nx=inside?P+(ex-x)*(W-2*P)/w:ex,nw=inside?ew*(W-2*P)/w:ew;if(ed<d){nx=ex;nw=ew;}\n"
	"r.setAttribute('x',nx);r.setAttribute('width',nw);t.setAttribute('x',nx+3);});}\n"
	"document.querySelectorAll('g.f').forEach(function(g){g.addEventListener('click',function(){"
	"zoom(g);});});\n";

int flame_svg(const char *path, const char *title, const struct flame_stack *s, size_t n)
{
	struct node root = { .name = "all" };
	FILE *f;

	for (size_t i = 0; i < n; i++)
		if (add_stack(&root, s[i].stack, s[i].count)) {
			fprintf(stderr, "pmuctl: %s: out of memory for the flame graph\n", path);
			free_tree(root.child);
			return -1;
		}
	if (!(f = fopen(path, "w"))) {
		fprintf(stderr, "pmuctl: cannot write %s: %s\n", path, strerror(errno));
		free_tree(root.child);
		return -1;
	}
	int height = depth_of(&root) * FRAME_H + TOP + 2 * PAD;
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"%.0f\" height=\"%d\" "
		"viewBox=\"0 0 %.0f %d\" xmlns=\"http://www.w3.org/2000/svg\">\n<style>text{font-family:Verdana,sans-serif;"
		"font-size:12px;pointer-events:none}g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.5}"
		"</style>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n<text x=\"%.0f\" y=\"24\" "
		"text-anchor=\"middle\" style=\"font-size:17px\">", WIDTH, height, WIDTH, height, WIDTH / 2);
	xml_text(f, title, SIZE_MAX);
	fputs("</text>\n", f);
	if (root.count)
		draw(f, &root, PAD, 0, height, root.count);
	fputs("<script><![CDATA[\n", f);
	fprintf(f, zoom_js, WIDTH, PAD);
	fputs("]]></script>\n</svg>\n", f);
	free_tree(root.child);
	if (fclose(f)) {
		fprintf(stderr, "pmuctl: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}
