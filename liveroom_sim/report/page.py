"""The report's one HTML page: sections, a sidebar to move between them, inline CSS and JS.

Nothing is loaded from anywhere when the page is viewed: styles, script and plots (SVG)
are all inside the file. Each section is shown on its own; the address's ``#fragment``
says which (so a link to ``report.html#ep-0-1`` opens that episode).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field


def esc(text) -> str:
    """``text`` escaped for HTML (``None`` as an empty string)."""
    return "" if text is None else html.escape(str(text), quote=True)


@dataclass
class Section:
    """One page of the report: ``id`` is its address fragment, ``nav`` its sidebar label,
    ``group`` the sidebar heading it is listed under."""

    id: str
    title: str
    body: str
    nav: str = ""
    group: str = ""


@dataclass
class Page:
    title: str
    subtitle: str = ""
    sections: list[Section] = field(default_factory=list)

    def render(self) -> str:
        nav, heading = [], None
        for s in self.sections:
            if s.group != heading:
                heading = s.group
                if heading:
                    nav.append(f'<div class="navhead">{esc(heading)}</div>')
            nav.append(f'<a href="#{esc(s.id)}" data-target="{esc(s.id)}">{esc(s.nav or s.title)}</a>')
        body = "\n".join(f'<section class="page" id="{esc(s.id)}"><h2>{esc(s.title)}</h2>\n{s.body}\n</section>'
                         for s in self.sections)
        return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                f"<title>{esc(self.title)}</title><style>{CSS}</style></head>\n<body>"
                f"<nav id=\"nav\"><div class=\"brand\">{esc(self.title)}</div>"
                f"<div class=\"sub\">{esc(self.subtitle)}</div>{''.join(nav)}</nav>\n"
                f"<main>{body}</main><script>{JS}</script></body></html>\n")


CSS = """
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
"DejaVu Sans",sans-serif;color:#1d2330;background:#f6f7f9;display:flex;min-height:100vh}
nav{width:250px;flex:none;background:#1f2a3a;color:#dfe6ee;padding:14px 10px;position:sticky;top:0;
height:100vh;overflow-y:auto}nav .brand{font-weight:700;font-size:15px;margin-bottom:2px}
nav .sub{font-size:12px;color:#9fb0c2;margin-bottom:12px}nav a{display:block;color:#dfe6ee;
text-decoration:none;padding:3px 8px;border-radius:4px;font-size:13px}nav a:hover{background:#2f3d52}
nav a.active{background:#3d6fb6;color:#fff}.navhead{margin:12px 0 4px;font-size:11px;
text-transform:uppercase;letter-spacing:.06em;color:#8ea1b6}main{flex:1;padding:18px 26px;min-width:0}
section.page{display:none}section.page.shown{display:block}h2{margin:0 0 12px}h3{margin:20px 0 8px}
table{border-collapse:collapse;background:#fff;margin:8px 0 14px;font-size:13px}
th,td{border:1px solid #dde2e8;padding:4px 8px;text-align:right;vertical-align:top}
th{background:#eef1f5}td.l,th.l{text-align:left}.plot{background:#fff;border:1px solid #dde2e8;
border-radius:6px;padding:6px;margin:8px 0;max-width:100%;overflow-x:auto}.plot svg{max-width:100%;height:auto}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0 14px}.card{background:#fff;border:1px solid #dde2e8;
border-radius:6px;padding:8px 12px;min-width:120px}.card b{display:block;font-size:18px}
.card span{font-size:12px;color:#5b6675}
.turn{display:grid;grid-template-columns:minmax(0,1fr) 330px;gap:10px;margin:6px 0;align-items:start}
.room{background:#eef3f9;border-left:3px solid #7d9cc4;padding:6px 10px;white-space:pre-wrap;
font-size:13px;border-radius:4px;margin:10px 0 4px}.bubble{background:#fff;border:1px solid #dde2e8;
border-radius:8px;padding:7px 10px}.bubble.host{border-left:4px solid #3d6fb6}.bubble.tool{
border-left:4px solid #8e8e8e;font-size:12.5px}.bubble.blocked{border-left-color:#d35400;background:#fff6ee}
.bubble.fault{border-left-color:#c0392b;background:#fdf0ef}.badge{display:inline-block;font-size:11px;
font-weight:700;padding:0 6px;border-radius:8px;margin-left:6px;color:#fff;background:#888}
.badge.blocked{background:#d35400}.badge.fault{background:#c0392b}.badge.gated{background:#8e44ad}
.badge.event{background:#16a085}.event{background:#e8f8f3;border-left:3px solid #16a085;padding:4px 10px;
margin:6px 0;font-size:13px;border-radius:4px}.reward{background:#fff;border:1px solid #dde2e8;
border-radius:8px;padding:6px 8px;font-size:12px}.reward table{margin:0;width:100%}.reward td{padding:1px 4px;
border:none;border-bottom:1px solid #f0f0f0}.reward .why{color:#5b6675;text-align:left;font-size:11.5px}
.reward .tot td{font-weight:700;border-top:1px solid #ccd}.neg{color:#c0392b}.pos{color:#1e7d46}
details summary{cursor:pointer;color:#3d6fb6}pre{white-space:pre-wrap;word-break:break-word;font-size:12px;
margin:4px 0}.note{color:#5b6675;font-size:13px}.side{display:flex;gap:10px;overflow-x:auto}
.side>div{flex:1;min-width:220px}.side table{width:100%}
"""

JS = """
(function(){
  var pages=document.querySelectorAll('section.page'),links=document.querySelectorAll('nav a');
  function show(){
    var id=decodeURIComponent(location.hash.slice(1))||(pages.length?pages[0].id:'');
    var found=document.getElementById(id);
    if(!found||!found.classList.contains('page')){id=pages.length?pages[0].id:'';}
    pages.forEach(function(p){p.classList.toggle('shown',p.id===id);});
    links.forEach(function(a){a.classList.toggle('active',a.getAttribute('data-target')===id);});
    window.scrollTo(0,0);
  }
  window.addEventListener('hashchange',show);show();
})();
"""
