# backupd: one image for both roles, for the platform it is built on (linux/amd64 or
# linux/arm64: `docker buildx build --platform linux/arm64 .`). The image runs the bundle on
# the image's own node, so the build skips the single executables and Debian packages.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build -- --no-sea

FROM node:24-bookworm-slim
RUN useradd --system --uid 10001 --create-home --home-dir /home/backupd backupd \
 && mkdir -p /data /scan && chown backupd:backupd /data
# The bundle and PGlite's files (the web UIs and migrations are inside the bundle).
COPY --from=build /src/dist/backupd.mjs /src/dist/pglite.wasm /src/dist/pglite.data /src/dist/initdb.wasm /opt/backupd/
COPY LICENSE README.md /opt/backupd/
USER backupd
ENV DATA_DIR=/data SCAN_ROOT=/scan NODE_ENV=production
# The data dir (database, keys, snapshots); a Scout also mounts the folders to back up at /scan.
# The health check asks PORT (default 6555): a Scout container sets PORT=6556.
VOLUME ["/data", "/scan"]
EXPOSE 6555 6556
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 6555) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/opt/backupd/backupd.mjs"]
CMD ["station", "serve"]
