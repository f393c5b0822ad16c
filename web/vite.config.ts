// Vite configuration for the gpurent dashboard.
// `npm run dev` proxies the API to a running `gpurent serve` (GPURENT_URL, default
// http://127.0.0.1:8080), so the browser talks to one origin exactly as it does when the
// server itself serves web/dist with --static-dir.
import { defineConfig } from "vite";

const target = process.env.GPURENT_URL ?? "http://127.0.0.1:8080";

export default defineConfig({
  base: "./",
  server: {
    // The message catalogues live in ../src/messages (shared with the server).
    fs: { allow: [".."] },
    proxy: {
      "/api": { target, changeOrigin: true },
      "/healthz": { target, changeOrigin: true },
    },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 1200,
  },
});
