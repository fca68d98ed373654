/* Flame graphs as SVG; see host/flame.h. Layout after flamegraph.pl (Brendan Gregg). */
#include "host/flame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH   1200.0 /* flamegraph.pl's default image width, pixels */
#define FRAME_H 16     /* pixels per frame */
#define PAD     10     /* left and right margins */
#define TOP     40     /* the title's room, with Reset Zoom and Search */
#define BOTTOM  20     /* the search's "Matched:" line */
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
	int rgb[3], y = height - FRAME_H * (d + 1) - PAD - BOTTOM;
	size_t fit = w > 3 * CHAR_W ? (size_t)(w / CHAR_W) : 0;

	if (w < 0.1) /* flamegraph.pl's --minwidth: too narrow to see */
		return;
	colour(n->name, rgb);
	fprintf(f, "<g class=\"f\" data-x=\"%.2f\" data-w=\"%.2f\" data-d=\"%d\" data-n=\"", x, w, d);
	xml_text(f, n->name, SIZE_MAX);
	fputs("\"><title>", f);
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

/*
 * flamegraph.pl's interaction: a click zooms to a box (the boxes above it
 * stretched to the width, its callers below at full width and faded, the
 * rest hidden), Reset Zoom or a click on the bottom box goes back; Search
 * (or Ctrl-F) colours the frames whose name matches a regular expression
 * and prints the share of the samples they hold, Reset Search clears it.
 * Labels are cut again to every box's new width. The view is in the
 * address (?x=&y= the zoomed box's rect, ?s= the search) so a link shows
 * it; W, P and CW are written before this.
 */
static const char flame_js[] =
	"var frames=[].slice.call(document.querySelectorAll('g.f')),params={};\n"
	"var unzoomB=document.getElementById('unzoom'),searchB=document.getElementById('search'),"
	"matchedT=document.getElementById('matched');\n"
	"location.search.substring(1).split('&').forEach(function(kv){var i=kv.indexOf('=');"
	"if(i>0)params[decodeURIComponent(kv.slice(0,i))]=decodeURIComponent(kv.slice(i+1).replace(/\\+/g,' '));});\n"
	"function remember(k,v){if(v===null)delete params[k];else params[k]=v;"
	"var q=Object.keys(params).map(function(k){return encodeURIComponent(k)+'='+encodeURIComponent(params[k]);}).join('&');"
	"try{history.replaceState(null,'',location.pathname+(q?'?'+q:''));}catch(err){}}\n"
	"function place(e,x,w){var r=e.querySelector('rect'),t=e.querySelector('text'),n=e.dataset.n,"
	"fit=w>3*CW?Math.floor(w/CW):0;r.setAttribute('x',x);r.setAttribute('width',w);t.setAttribute('x',x+3);"
	"t.textContent=!fit?'':n.length>fit?n.slice(0,fit-2)+'..':n;}\n"
	"function zoom(g){var x=+g.dataset.x,w=+g.dataset.w,d=+g.dataset.d;\n"
	" if(d==0){unzoom();return;}\n"
	" frames.forEach(function(e){var ex=+e.dataset.x,ew=+e.dataset.w,ed=+e.dataset.d;\n"
	"  var inside=ed>=d&&ex>=x-0.01&&ex+ew<=x+w+0.01,caller=ed<d&&ex<=x+0.01&&ex+ew>=x+w-0.01;\n"
	"  e.style.display=inside||caller?'':'none';e.style.opacity=caller?0.5:1;\n"
	"  if(inside)place(e,P+(ex-x)*(W-2*P)/w,ew*(W-2*P)/w);else if(caller)place(e,P,W-2*P);});\n"
	" unzoomB.style.opacity=1;remember('x',g.dataset.x);remember('y',g.querySelector('rect').getAttribute('y'));}\n"
	"function unzoom(){frames.forEach(function(e){e.style.display='';e.style.opacity=1;"
	"place(e,+e.dataset.x,+e.dataset.w);});unzoomB.style.opacity=0;remember('x',null);remember('y',null);}\n"
	"function search(term){var re;try{re=new RegExp(term);}catch(err){matchedT.textContent='not a regular expression: '+term;return;}\n"
	" var hit=[];frames.forEach(function(e){var r=e.querySelector('rect');if(!e.dataset.c)e.dataset.c=r.getAttribute('fill');\n"
	"  var m=re.test(e.dataset.n);r.setAttribute('fill',m?'rgb(230,0,230)':e.dataset.c);"
	"if(m)hit.push([+e.dataset.x,+e.dataset.x+ +e.dataset.w]);});\n"
	" hit.sort(function(a,b){return a[0]-b[0];});var sum=0,end=0;"
	"hit.forEach(function(h){if(h[1]>end){sum+=h[1]-Math.max(h[0],end);end=h[1];}});\n"
	" matchedT.textContent='Matched: '+(100*sum/(W-2*P)).toFixed(1)+'%';searchB.textContent='Reset Search';"
	"searchB.style.opacity=1;remember('s',term);}\n"
	"function resetSearch(){frames.forEach(function(e){if(e.dataset.c)e.querySelector('rect').setAttribute('fill',e.dataset.c);});\n"
	" matchedT.textContent='';searchB.textContent='Search';searchB.style.opacity=0.5;remember('s',null);}\n"
	"function askSearch(){if(params.s!==undefined){resetSearch();return;}"
	"var t=prompt('Enter a search term (regexp allowed, eg: ^__adddf3)','');if(t)search(t);}\n"
	"frames.forEach(function(g){g.addEventListener('click',function(){zoom(g);});});\n"
	"unzoomB.addEventListener('click',unzoom);searchB.addEventListener('click',askSearch);\n"
	"window.addEventListener('keydown',function(ev){if(ev.keyCode===114||(ev.ctrlKey&&ev.keyCode===70)){"
	"ev.preventDefault();askSearch();}});\n"
	"if(params.x!==undefined)frames.forEach(function(g){if(g.dataset.x===params.x&&"
	"g.querySelector('rect').getAttribute('y')===params.y)zoom(g);});\n"
	"if(params.s)search(params.s);\n";

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
	int height = depth_of(&root) * FRAME_H + TOP + BOTTOM + 2 * PAD;
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"%.0f\" height=\"%d\" "
		"viewBox=\"0 0 %.0f %d\" xmlns=\"http://www.w3.org/2000/svg\">\n<style>text{font-family:Verdana,sans-serif;"
		"font-size:12px;pointer-events:none}g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.5}"
		"text.b{pointer-events:auto;cursor:pointer}</style>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n<text x=\"%.0f\" y=\"24\" "
		"text-anchor=\"middle\" style=\"font-size:17px\">", WIDTH, height, WIDTH, height, WIDTH / 2);
	xml_text(f, title, SIZE_MAX);
	fprintf(f, "</text>\n<text id=\"unzoom\" class=\"b\" x=\"%d\" y=\"24\" style=\"opacity:0\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"b\" x=\"%.0f\" y=\"24\" text-anchor=\"end\" style=\"opacity:0.5\">Search"
		"</text>\n<text id=\"matched\" x=\"%.0f\" y=\"%d\" text-anchor=\"end\"></text>\n", PAD, WIDTH - PAD,
		WIDTH - PAD, height - PAD);
	if (root.count)
		draw(f, &root, PAD, 0, height, root.count);
	fputs("<script><![CDATA[\n", f);
	fprintf(f, "var W=%.2f,P=%d,CW=%.4f;\n", WIDTH, PAD, CHAR_W);
	fputs(flame_js, f);
	fputs("]]></script>\n</svg>\n", f);
	free_tree(root.child);
	if (fclose(f)) {
		fprintf(stderr, "pmuctl: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}
