# The service image: Node 22 runs the TypeScript sources directly (type stripping), no build step.
FROM node:22-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 SMS_DATA_DIR=/data
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY src ./src
COPY simulator ./simulator
COPY bin ./bin
# the embedded database's directory (SMS_DATA_DIR), writable by the user the service runs as;
# mount a volume there to keep its data
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
# the port the service listens on, whatever PORT the container is given
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# a bounded heap keeps the process well under 256 MB RSS (bench/RESULTS.md)
CMD ["node", "--max-old-space-size=160", "src/main.ts"]
