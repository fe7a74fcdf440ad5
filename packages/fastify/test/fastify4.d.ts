/** `fastify4` is fastify@4 installed under an alias; its API is typed like Fastify 5's. */
declare module 'fastify4' {
  import fastify from 'fastify';
  export default fastify;
}
