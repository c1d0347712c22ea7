import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The console is served by the API node at `/`; in development Vite serves it and hands /api to a
// running API (`npm start` in another terminal), so both see the same origin.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  resolve: {
    alias: {
      // The filter operators as the API compiles them (a pure module: no Node built-ins).
      '@sightline/core/filters': fileURLToPath(new URL('../../libs/core/src/filters.ts', import.meta.url)),
    },
  },
  server: { port: 5173, proxy: { '/api': { target: 'http://127.0.0.1:8000', changeOrigin: false } } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The 400 KB gzipped budget is for the entry; pages are separate chunks (React.lazy per route).
    chunkSizeWarningLimit: 800,
  },
});
