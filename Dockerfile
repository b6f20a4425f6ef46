# One image for the API and the workers (docker-compose.yml picks the command).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci
COPY . .
ENV NODE_ENV=production
CMD ["npm", "run", "start:api"]
