FROM node:20-slim

WORKDIR /app
# The data directory is a volume in docker-compose.yml; made here so that it belongs to the gateway's user.
RUN chown node:node /app && mkdir -p /data && chown node:node /data
USER node

COPY --chown=node:node package.json package-lock.json ./
# tsx is a runtime dependency (the gateway runs its TypeScript directly), so dev dependencies can stay out.
RUN npm ci --omit=dev

COPY --chown=node:node . .

ENV HOST=0.0.0.0 \
    PORT=8080 \
    GATEWAY_DATA_DIR=/data
EXPOSE 8080

# What `npm start` runs, without npm and sh in between: they do not pass SIGTERM on, and the gateway needs it
# to finish requests and pending appends before the container stops.
CMD ["node", "--import", "tsx", "src/server.ts"]
