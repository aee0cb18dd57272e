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

render(
  <QueryClientProvider client={queries}>
    <App />
  </QueryClientProvider>,
  document.getElementById('app')!,
);
