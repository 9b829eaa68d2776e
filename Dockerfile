# The gateway runs from JavaScript compiled in a build stage: compiled code starts faster and holds less memory
# than TypeScript compiled in the process by tsx. The build needs the TypeScript compiler (a development
# dependency); the image that runs keeps the runtime dependencies alone.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build

FROM node:20-slim

WORKDIR /app
# The data directory is a volume in docker-compose.yml; made here so that it belongs to the gateway's user.
RUN chown node:node /app && mkdir -p /data && chown node:node /data
USER node

COPY --chown=node:node package.json package-lock.json ./
# tsx stays a runtime dependency: the operator CLI (`npx model-gateway`) runs its TypeScript sources.
RUN npm ci --omit=dev

COPY --chown=node:node . .
COPY --chown=node:node --from=build /app/dist ./dist

ENV HOST=0.0.0.0 \
    PORT=8080 \
    GATEWAY_DATA_DIR=/data
EXPOSE 8080

# The compiled gateway, without npm and sh in between: they do not pass SIGTERM on, and the gateway needs it to
# finish requests and pending appends before the container stops.
CMD ["node", "dist/src/server.js"]
