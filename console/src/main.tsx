import { QueryClient, QueryClientProvider } from '@tanstack/preact-query';
import { render } from 'preact';
import { App } from './app.js';
import './styles.css';

const queries = new QueryClient({
  defaultOptions: {
    // A 4xx will not be better on a second try; the console says what it was at once.
    queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 },
  },
});

// The page's static "Loading" line paints before this script has loaded; it goes now.
const root = document.getElementById('app')!;
root.textContent = '';
render(
  <QueryClientProvider client={queries}>
    <App />
  </QueryClientProvider>,
  root,
);
