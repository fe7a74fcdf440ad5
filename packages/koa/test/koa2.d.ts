/** `koa2` is koa@2 installed under an alias; its API is typed like Koa 3's. */
declare module 'koa2' {
  import Koa from 'koa';
  export default Koa;
}
