FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps ./apps
COPY libs ./libs
# patches/ fixes known bugs in dependencies (applied by the postinstall script).
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund
COPY scripts ./scripts
COPY tsconfig.json ./
# The web console, built once into the image (npm start would otherwise build it at every start).
RUN node --import tsx scripts/build-web.ts
# The API and the worker as plain JavaScript (dist/server), which their processes run.
RUN node --import tsx scripts/build-server.ts
ENV HOST=0.0.0.0 NODE_ENV=production
EXPOSE 8000
# npm start's own command: npm would stay in memory beside it.
CMD ["node", "--import", "tsx", "scripts/start.ts"]
