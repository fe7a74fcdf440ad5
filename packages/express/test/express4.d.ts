/** `express4` is express@4 installed under an alias; its API is typed like Express 5's. */
declare module 'express4' {
  import express from 'express';
  export default express;
}
