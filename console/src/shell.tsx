import { useEffect, useState } from 'preact/hooks';
import { AREAS, DOMAIN_VERIFICATION } from './areas.js';
import { useConsole } from './context.js';
import { ApiKeysPage } from './pages/api-keys.js';
import { OPERATOR_PAGES, OperatorPage } from './pages/operator.js';
import { Overview } from './pages/overview.js';
import { OWN_PAGES } from './pages/own-pages.js';
import { PLATFORM_PAGES } from './pages/platform/index.js';
import { AreaPage, DetailPage } from './pages/resource.js';
import { Link, match, useLocation } from './router.js';
import { applyTheme, initialTheme, type Theme } from './theme.js';

/** The frame of every signed-in page: the navigation by area, the theme switch, sign-out. */
export function Shell() {
  const { session, signOut } = useConsole();
  const { path } = useLocation();
  const [theme, setTheme] = useState<Theme>(initialTheme());
  const operator = session.kind === 'operator';
  const links = operator ? OPERATOR_PAGES : AREAS;
  const current = path.split('/')[1] ?? '';

  let page = null;
  let title = 'Overview';
  if (operator) {
    const p = OPERATOR_PAGES.find((o) => o.slug === current) ?? OPERATOR_PAGES[0]!;
    title = p.name;
    page = <OperatorPage slug={p.slug} name={p.name} />;
  } else if (path === '/') page = <Overview />;
  else {
    const area = [...AREAS, DOMAIN_VERIFICATION].find((a) => a.slug === current);
    const item = match('/:area/:item', path);
    title = area?.name ?? 'Not found';
    if (!area)
      page = (
        <section>
          <h1>Page not found</h1>
          <p>
            There is no page here. <Link href="/">Go to the overview</Link>.
          </p>
        </section>
      );
    else if (area.slug === 'api-keys') page = <ApiKeysPage />;
    else if (OWN_PAGES[area.slug]) page = OWN_PAGES[area.slug]!(path);
    else if (PLATFORM_PAGES[area.slug]) {
      const Platform = PLATFORM_PAGES[area.slug]!;
      page = <Platform key={area.slug} path={path} />;
    } else if (item) page = <DetailPage key={path} area={area} id={item['item']!} />;
    else page = <AreaPage key={area.slug} area={area} />;
  }
  useEffect(() => {
    document.title = `${title} — Fjord console`;
  }, [title]);

  return (
    <div class="layout">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/" class="brand">
          Fjord
        </Link>
        <span class="who">{operator ? 'Operator' : `Customer ${session.customer_id ?? ''}`}</span>
        <button
          type="button"
          onClick={() => {
            const next = theme === 'dark' ? 'light' : 'dark';
            applyTheme(next, true);
            setTheme(next);
          }}
        >
          {theme === 'dark' ? 'Light theme' : 'Dark theme'}
        </button>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <nav class="side" aria-label="Areas">
        <ul>
          {!operator && (
            <li>
              <Link href="/" aria-current={path === '/' ? 'page' : undefined}>
                Overview
              </Link>
            </li>
          )}
          {links.map((a) => (
            <li key={a.slug}>
              <Link href={`/${a.slug}`} aria-current={current === a.slug ? 'page' : undefined}>
                {a.name}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </div>
  );
}
