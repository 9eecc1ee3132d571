# The service image: Node 22 runs the TypeScript sources directly (type stripping), no build step.
FROM node:22-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 SMS_DATA_DIR=/data
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY src ./src
COPY simulator ./simulator
COPY bin ./bin
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:8080/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# a bounded heap keeps the process well under 256 MB RSS (bench/RESULTS.md)
CMD ["node", "--max-old-space-size=160", "src/main.ts"]
